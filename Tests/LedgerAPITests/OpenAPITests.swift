import Foundation
import HTTPTypes
import LedgerAPI
import Testing

@Suite("OpenAPI document")
struct OpenAPITests {
    /// (method, path) pairs of the document's `paths:` section.
    static func documented() -> [(String, String)] {
        var result: [(String, String)] = []
        var inPaths = false
        var current: String?
        for line in OpenAPIDocument.text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" { inPaths = true; continue }
            guard inPaths else { continue }
            if line.hasPrefix("  /") { current = String(line.dropFirst(2).dropLast()) }
            else if let current, line.hasPrefix("    "), !line.hasPrefix("     "),
                let method = ["get:", "post:", "put:", "delete:", "patch:"].first(where: { line.trimmingCharacters(in: .whitespaces) == $0 })
            {
                result.append((String(method.dropLast()), current))
            }
        }
        return result
    }

    /// The endpoints this server implements: kept here as the contract list.
    static let implemented: Set<String> = [
        "get /health", "get /ready", "get /metrics", "get /openapi.yaml",
        "post /v1/collaborations", "get /v1/collaborations/{id}", "post /v1/collaborations/{id}/participants",
        "get /v1/collaborations/{id}/members", "get /v1/collaborations/{id}/history",
        "post /v1/collaborations/{id}/highlights", "get /v1/collaborations/{id}/highlights",
        "get /v1/accounts/me/collaborations", "get /v1/audit/access", "post /v1/challenges",
        "post /v1/collaborations/{id}/proofs", "get /v1/collaborations/{id}/proofs/{requestId}",
        "get /v1/log/key", "get /v1/log/checkpoint", "get /v1/log/proofs/inclusion", "get /v1/log/proofs/consistency",
        "get /v1/audit/evidence/{position}",
    ]

    @Test("the served document lists exactly the routes the router answers")
    func inStep() async throws {
        let documented = Self.documented()
        #expect(Set(documented.map { "\($0.0) \($0.1)" }) == Self.implemented)
        try await withAPI { api in
            let served = try await api.call(.get, "/openapi.yaml")
            #expect(served.status == .ok && served.raw == OpenAPIDocument.text)
            for (method, path) in documented {
                let uri = path.replacingOccurrences(of: "{id}", with: UUID().uuidString.lowercased())
                    .replacingOccurrences(of: "{requestId}", with: UUID().uuidString.lowercased())
                    .replacingOccurrences(of: "{position}", with: "1")
                let r = try await api.call(method == "get" ? .get : .post, uri, as: "auditor", roles: ["auditor"], json: method == "post" ? "{}" : nil)
                #expect(r.body.errorCode != "route_not_found", "\(method) \(path) is documented but not routed")
                #expect(r.status.code < 500, "\(method) \(path): \(r.raw)")
            }
        }
    }
}
