import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerAPI
import LedgerDomain
import LedgerPostgres
import LedgerWire
import LedgerProjections
import LedgerStore
import LedgerTestSupport
import LedgerVerifier
import Logging
import NIOCore
import PostgresNIO
import Testing

/// A router on a fresh migrated database, and tokens to call it with.
struct API {
    let client: any TestClientProtocol
    let authority: TokenAuthority
    let db: PostgresClient
    /// What the router registered, as `method /path/{param}` (the OpenAPI test compares the
    /// document with it).
    let routes: Set<String>

    func token(_ account: String, roles: [String] = []) async throws -> String {
        try await authority.issue(account: account, roles: roles)
    }

    @discardableResult
    func call(
        _ method: HTTPRequest.Method, _ uri: String, as account: String? = nil, roles: [String] = [],
        json: String? = nil, headers extra: HTTPFields = [:]
    ) async throws -> (status: HTTPResponse.Status, body: JSONValue, raw: String) {
        var headers = extra
        if let account { headers[.authorization] = "Bearer \(try await token(account, roles: roles))" }
        if json != nil { headers[.contentType] = "application/json" }
        let response = try await client.execute(
            uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
        let raw = String(buffer: response.body)
        let body = (try? JSONDecoder().decode(JSONValue.self, from: Data(raw.utf8))) ?? .null
        return (response.status, body, raw)
    }

    func eventCount() async throws -> Int64 {
        let rows = try await db.query("SELECT count(*) FROM ledger_events")
        for try await n in rows.decode(Int64.self) { return n }
        return -1
    }
}

/// How the router under test reaches verdicts: by default a decider in the same process, as
/// in `ledger serve`; tests of the worker path pass their own link.
typealias LinkFactory = @Sendable (PostgresClient, PostgresEventStore) -> VerifierLink

/// `signer`: also run a checkpointer signing with it, as `ledger serve` does.
func withAPI(
    configuration: APIConfiguration = .testing(), verifier: LinkFactory? = nil, signer: NoteSigner? = nil,
    _ body: @Sendable (API) async throws -> Void
) async throws {
    try await withTestStore { store, client, _ in
        let authority = try await TokenAuthority(secret: "test-secret-\(UUID())")
        let logger = Logger(label: "api-test")
        let link = verifier?(client, store)
            ?? .local(client: client, logger: logger, verdicts: nil)
        let events = NotificationHub(client: client, channel: "ledger_events", logger: logger)
        let feed = FeedTail(store: store, events: events, logger: logger)
        let router = buildRouter(
            client: client, store: store, authority: authority, configuration: configuration, verifier: link, feed: feed, logger: logger)
        let routes = Set(
            router.routes.map { route in
                let path = route.path.description.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
                return "\(route.method.rawValue.lowercased()) /\(path.joined(separator: "/"))"
            })
        let app = Application(router: router)
        // Projector workers keep the views the reads are served from up to date.
        let projector = ProjectorWorker(client: client, events: events, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await events.run() }
            group.addTask { try await projector.run() }
            group.addTask { try await feed.run() }
            if let signer {
                let checkpointer = Checkpointer(client: client, signer: signer, events: events, logger: logger, interval: .milliseconds(20))
                group.addTask { try await checkpointer.run() }
            }
            defer { group.cancelAll() }
            try await app.test(.router) { testClient in
                try await body(API(client: testClient, authority: authority, db: client, routes: routes))
            }
        }
    }
}

extension JSONValue {
    var string: String? { if case .string(let s) = self { return s } else { return nil } }
    var int: Int64? { if case .number(let n) = self { return Int64(n) } else { return nil } }
    var array: [JSONValue] { if case .array(let a) = self { return a } else { return [] } }
    var errorCode: String? { self["error"]?["code"]?.string }
}

let startBody = #"""
{"localIdentifier":"doc-1","title":"Trip plan","initiatorHandle":"devin@example.com","initiatorName":"Devin",
 "shareOptions":{"summary":"Anyone can edit","groups":[
   {"identifier":"permission","title":"Permission","kind":"picker","options":[
     {"identifier":"rw","title":"Can make changes","selected":true},{"identifier":"ro","title":"Read only","selected":false}]},
   {"identifier":"extra","title":"Additional Settings","kind":"switches","options":[
     {"identifier":"mentions","title":"Allow mentions","selected":true},{"identifier":"comments","title":"Allow comments","selected":false}]}]}}
"""#

extension APIConfiguration {
    /// Defaults, with reads waiting up to 20 s for the projector: a test machine running every
    /// suite at once may lag far more than the 2 s a production read waits.
    static func testing(_ change: (inout APIConfiguration) -> Void = { _ in }) -> APIConfiguration {
        var configuration = APIConfiguration()
        configuration.readWait = .seconds(20)
        change(&configuration)
        return configuration
    }
}
