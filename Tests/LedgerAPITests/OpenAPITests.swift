import Foundation
import HTTPTypes
import Hummingbird
import LedgerAPI
import LedgerConfiguration
import LedgerConsole
import LedgerDomain
import LedgerFeed
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import LedgerWire
import Logging
import Testing

@Suite("OpenAPI document")
struct OpenAPITests {
    /// (method, path) pairs of the document's `paths:` section.
    static func documented() -> [(String, String)] {
        var result: [(String, String)] = []
        var inPaths = false
        var current: String?
        for line in OpenAPIDocument.text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" {
                inPaths = true
                continue
            }
            guard inPaths else { continue }
            if line.hasPrefix("  /") {
                current = String(line.dropFirst(2).dropLast())
            } else if let current, line.hasPrefix("    "), !line.hasPrefix("     "),
                let method = ["get:", "post:", "put:", "delete:", "patch:"].first(where: { line.trimmingCharacters(in: .whitespaces) == $0 }
                )
            {
                result.append((String(method.dropLast()), current))
            }
        }
        return result
    }

    /// What a router over the server's database registers, as `method /path/{param}`.
    static func routes(of api: LiveServer) -> Set<String> {
        let logger = Logger(label: "openapi-test")
        let store = EventStore(client: api.db, logger: logger)
        let feed = FeedTail(
            store: store, events: NotificationHub(client: api.db, channel: EventStore.channel, logger: logger), logger: logger)
        let router = buildRouter(
            client: api.db, store: store, authority: api.authority, configuration: .testing(), proofs: .inProcess(api.db, store),
            feed: feed, logger: logger)
        return Set(
            router.routes.map { route in
                let path = route.path.description.split(separator: "/").map {
                    $0.hasPrefix(":") ? "{\($0.dropFirst())}" : $0 == "**" ? "{path}" : String($0)
                }
                return "\(route.method.rawValue.lowercased()) /\(path.joined(separator: "/"))"
            })
    }

    @Test("the served document lists exactly the routes the router answers")
    func inStep() async throws {
        let documented = Self.documented()
        try await LiveServer.run { api in
            let routes = Self.routes(of: api)
            // The tiles are one route (`tile/**`), documented as one path per number of index groups.
            let routed = documented.map { $0.1.hasPrefix("/tlog/tile/") ? ($0.0, "/tlog/tile/{path}") : $0 }
            #expect(Set(routed.map { "\($0.0) \($0.1)" }) == routes)
            #expect(documented.filter { $0.1.hasPrefix("/tlog/tile/") }.count == 14)
            #expect(routes.count >= 21)
            let served = try await api.call(.get, "/openapi.yaml")
            #expect(served.status == .ok && served.raw == OpenAPIDocument.text)
            for (method, path) in documented {
                let uri =
                    path.replacingOccurrences(of: "{id}", with: UUID().uuidString.lowercased())
                    .replacingOccurrences(of: "{requestId}", with: UUID().uuidString.lowercased())
                    .replacingOccurrences(of: "{position}", with: "1")
                    .replacingOccurrences(of: "{level}", with: "0").replacingOccurrences(of: "{n}", with: "000")
                    .replacingOccurrences(of: "{width}", with: "1")
                    .replacingOccurrences(of: #"\{x[1-6]\}"#, with: "x001", options: .regularExpression)
                    .replacingOccurrences(of: "{file}", with: "console.js")
                    // The feed's answer never ends: ask from past the head, a 400 before the stream.
                    + (path == "/v1/feed" ? "?after=9223372036854775807" : "")
                let r = try await api.call(
                    method == "get" ? .get : .post, uri, as: "auditor", roles: ["auditor"], json: method == "post" ? "{}" : nil)
                #expect(r.body.errorCode != "route_not_found", "\(method) \(path) is documented but not routed")
                #expect(r.status.code < 500, "\(method) \(path): \(r.raw)")
            }
        }
    }

    @Test("the document's error codes are the catalogue's, each with its status and meaning")
    func errorCatalogue() throws {
        let text = OpenAPIDocument.text
        let enumLine = try #require(text.split(separator: "\n").first { $0.hasPrefix("              enum: [invalid_request") })
        let documented = enumLine.drop { $0 != "[" }.dropFirst().dropLast().split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        #expect(documented == ErrorCode.served.map(\.rawValue))
        for code in ErrorCode.served {
            #expect(text.contains("- `\(code.rawValue)` (\(code.status)): \(code.meaning)\n"), "\(code.rawValue)")
        }
    }
}
