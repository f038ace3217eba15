import Foundation
import HTTPTypes
import HummingbirdTesting
import LedgerAPI
import LedgerConfiguration
import LedgerDomain
import LedgerTestSupport
import LedgerTokens
import LedgerWire
import NIOCore
import PostgresNIO
import Testing
import TransparencyLog

@Suite("Collaboration API")
struct CollaborationAPITests {
    @Test("missing, malformed, forged and expired tokens get 401 and change nothing")
    func auth() async throws {
        try await LiveServer.run { api in
            #expect(try await api.call(.post, "/v1/collaborations", json: startBody).status == .unauthorized)
            var headers = HTTPFields()
            headers[.authorization] = "Basic abc"
            #expect(try await api.call(.post, "/v1/collaborations", json: startBody, headers: headers).status == .unauthorized)
            let forged = try await TokenAuthority(secret: "someone-else-with-a-secret-long-enough-for-hs256").issue(account: "owner")
            headers[.authorization] = "Bearer \(forged)"
            let r = try await api.call(.post, "/v1/collaborations", json: startBody, headers: headers)
            #expect(r.status == .unauthorized && r.body.errorCode == "invalid_token")
            let expired = try await api.authority.issue(account: "owner", validFor: -60)
            headers[.authorization] = "Bearer \(expired)"
            #expect(try await api.call(.post, "/v1/collaborations", json: startBody, headers: headers).status == .unauthorized)
            #expect(try await api.call(.get, "/v1/accounts/me/collaborations").status == .unauthorized)
            #expect(try await api.eventCount() == 0)
            #expect(try await api.call(.get, "/health").status == .ok)
            #expect(try await api.call(.get, "/ready").status == .ok)
        }
    }

    @Test("start: 201 with id, link and position; bad input is a 4xx that changes nothing")
    func start() async throws {
        try await LiveServer.run(
            configuration: .testing {
                $0.publicBaseURL = "https://links.example.com"
                $0.bodyLimit = 4096
            }
        ) { api in
            let r = try await api.call(.post, "/v1/collaborations", as: "owner", json: startBody)
            #expect(r.status == .created)
            let id = try #require(r.body["collaborationId"]?.string)
            #expect(r.body["universalLink"]?.string == "https://links.example.com/collaborations/\(id)")
            #expect(r.body["position"]?.int == 1)

            let refusals: [(String, String)] = [
                ("{", "malformed_json"),
                ("[]", "wrong_type"),
                (#"{"title":"t","initiatorHandle":"h"}"#, "missing_field"),
                (#"{"localIdentifier":5,"title":"t","initiatorHandle":"h"}"#, "wrong_type"),
                (#"{"localIdentifier":"","title":"t","initiatorHandle":"h"}"#, "missing_field"),
                (
                    #"{"localIdentifier":"l","title":"t","initiatorHandle":"h","shareOptions":{"groups":[{"identifier":"p","title":"P","kind":"picker","options":[{"identifier":"a","title":"A","selected":true},{"identifier":"b","title":"B","selected":true}]}]}}"#,
                    "invalid_share_options"
                ),
                (
                    #"{"localIdentifier":"l","title":"t","initiatorHandle":"h","shareOptions":{"groups":[{"identifier":"p","title":"P","kind":"dial","options":[]}]}}"#,
                    "invalid_value"
                ),
            ]
            for (body, code) in refusals {
                let refused = try await api.call(.post, "/v1/collaborations", as: "owner", json: body)
                #expect(refused.status == .badRequest, "\(body)")
                #expect(refused.body.errorCode == code, "\(body): \(refused.raw)")
            }
            let big = #"{"localIdentifier":"l","title":""# + String(repeating: "x", count: 5000) + #"","initiatorHandle":"h"}"#
            let tooLarge = try await api.call(.post, "/v1/collaborations", as: "owner", json: big)
            #expect(tooLarge.status == .contentTooLarge && tooLarge.body.errorCode == "payload_too_large")
            #expect(try await api.eventCount() == 1)
        }
    }

    @Test("Idempotency-Key: a retry returns the first answer; the key with another body is refused")
    func idempotency() async throws {
        try await LiveServer.run { api in
            var headers = HTTPFields()
            headers[HTTPField.Name("Idempotency-Key")!] = "key-1"
            let first = try await api.call(.post, "/v1/collaborations", as: "owner", json: startBody, headers: headers)
            let retry = try await api.call(.post, "/v1/collaborations", as: "owner", json: startBody, headers: headers)
            #expect(first.status == .created && retry.status == .created)
            #expect(first.raw == retry.raw)
            let other = try await api.call(
                .post, "/v1/collaborations", as: "owner", json: #"{"localIdentifier":"x","title":"t","initiatorHandle":"h"}"#,
                headers: headers)
            #expect(other.status == .unprocessableContent && other.body.errorCode == "idempotency_key_reused")
            // The same key from another account is another request.
            let elsewhere = try await api.call(.post, "/v1/collaborations", as: "someone", json: startBody, headers: headers)
            #expect(elsewhere.status == .created && elsewhere.body["collaborationId"] != first.body["collaborationId"])
            #expect(try await api.eventCount() == 2)
        }
    }

    @Test("participants and highlights: ownership, access, validation, unknown ids")
    func refusals() async throws {
        try await LiveServer.run { api in
            let id = try await api.call(.post, "/v1/collaborations", as: "owner", json: startBody).body["collaborationId"]!.string!
            let good = Base64.encode(Array(repeating: 1, count: 32))
            let path = "/v1/collaborations/\(id)/participants"
            let cases: [(String?, String, String, HTTPResponse.Status, String)] = [
                ("mallory", path, #"{"added":["\#(good)"]}"#, .forbidden, "not_owner"),
                ("owner", path, #"{"added":["not base64!"]}"#, .badRequest, "invalid_base64"),
                ("owner", path, #"{"added":["\#(Base64.encode([1, 2, 3]))"]}"#, .badRequest, "invalid_length"),
                ("owner", path, #"{"added":["\#(good)"],"removed":["\#(good)"]}"#, .badRequest, "conflicting_identities"),
                ("owner", path, #"{"added":"x"}"#, .badRequest, "wrong_type"),
                (
                    "owner", "/v1/collaborations/\(UUID().uuidString.lowercased())/participants", #"{"added":["\#(good)"]}"#, .notFound,
                    "not_found"
                ),
                ("owner", "/v1/collaborations/not-an-id/participants", #"{"added":["\#(good)"]}"#, .notFound, "not_found"),
                ("mallory", "/v1/collaborations/\(id)/highlights", #"{"kind":"change","trigger":"edit"}"#, .forbidden, "no_access"),
                ("owner", "/v1/collaborations/\(id)/highlights", #"{"kind":"change","trigger":"moved"}"#, .badRequest, "invalid_highlight"),
                ("owner", "/v1/collaborations/\(id)/highlights", #"{"kind":"gossip","trigger":"edit"}"#, .badRequest, "invalid_highlight"),
                (
                    "owner", "/v1/collaborations/\(id)/highlights", #"{"kind":"membership","trigger":"addedCollaborator"}"#, .badRequest,
                    "invalid_highlight"
                ),
                (
                    "owner", "/v1/collaborations/\(id)/highlights", #"{"kind":"mention","mentionedRootHash":"\#(good)"}"#,
                    .unprocessableContent, "unknown_identity"
                ),
                ("mallory", "/v1/collaborations/\(id)?minPosition=1", nil ?? "", .forbidden, "no_access"),
                ("mallory", "/v1/collaborations/\(id)/history", "", .forbidden, "not_owner_or_auditor"),
                ("owner", "/v1/audit/access", "", .forbidden, "not_auditor"),
                ("owner", "/v1/collaborations/\(id)/members?atPosition=-1", "", .badRequest, "invalid_query"),
                ("owner", "/v1/collaborations/\(id)/members?asOf=yesterday", "", .badRequest, "invalid_query"),
                ("owner", "/v1/nothing-here", "", .notFound, "route_not_found"),
            ]
            for (account, uri, body, status, code) in cases {
                let r = try await api.call(body.isEmpty ? .get : .post, uri, as: account, json: body.isEmpty ? nil : body)
                #expect(r.status == status, "\(uri) \(body): \(r.raw)")
                #expect(r.body.errorCode == code, "\(uri) \(body): \(r.raw)")
            }
            #expect(try await api.eventCount() == 1)
        }
    }

    @Test("request ids: the caller's X-Request-Id echoed and recorded with the events; a junk one replaced")
    func requestIds() async throws {
        try await LiveServer.run { api in
            let name = HTTPField.Name("X-Request-Id")!
            let token = try await api.token("owner")
            let start = try await api.execute(
                uri: "/v1/collaborations", method: .post,
                headers: [.authorization: "Bearer \(token)", .contentType: "application/json", name: "client-req-42"],
                body: ByteBuffer(string: startBody))
            #expect(start.status == .created)
            #expect(start.headers[name] == "client-req-42")
            let rows = try await api.db.query("SELECT metadata->>'requestId' FROM ledger_events")
            var recorded: [String?] = []
            for try await id in rows.decode(String?.self) { recorded.append(id) }
            #expect(recorded == [PersonalData.clientTextDigest("client-req-42")])  // only its SHA-256 enters the log
            // Not a plain token: the server's own id instead, on refusals too.
            let junk = try await api.execute(
                uri: "/v1/collaborations/\(UUID())", method: .get,
                headers: [.authorization: "Bearer \(token)", name: "two words\u{7f}"])
            #expect(junk.status == .notFound)
            let generated = try #require(junk.headers[name])
            #expect(generated != "two words\u{7f}" && !generated.isEmpty)
            let unauthenticated = try await api.execute(uri: "/v1/collaborations", method: .post, headers: [name: "r-1"])
            #expect(unauthenticated.status == .unauthorized && unauthenticated.headers[name] == "r-1")
        }
    }

    @Test("a known path with a method it does not serve: 405 with Allow; unknown paths stay 404")
    func methodNotAllowed() async throws {
        try await LiveServer.run { api in
            let id = UUID().uuidString.lowercased()
            let cases: [(HTTPRequest.Method, String, String?)] = [
                (.trace, "/v1/collaborations", "GET, POST"),
                (.delete, "/v1/collaborations/\(id)", "GET"),
                (.put, "/v1/collaborations/\(id)/highlights", "GET, POST"),
                (.post, "/health", "GET"),
                (.patch, "/v1/collaborations/\(id)/proofs/\(id)", "GET"),
                (.delete, "/v1/no-such-thing", nil),
            ]
            for (method, uri, allow) in cases {
                let response = try await api.execute(uri: uri, method: method, headers: [:])
                let body = String(buffer: response.body)
                if let allow {
                    #expect(response.status == .methodNotAllowed, "\(method) \(uri): \(body)")
                    #expect(response.headers[.allow] == allow, "\(method) \(uri)")
                    #expect(body.contains("method_not_allowed"))
                } else {
                    #expect(response.status == .notFound, "\(method) \(uri): \(body)")
                }
            }
        }
    }

    /// Audit filters: a malformed collaboration id or an account with NUL is a 400, an unknown one
    /// matches nothing; positions past int64 are a 400.
    @Test("audit filters: a bad collaboration id, an account with NUL, a position past int64: 400")
    func auditFilters() async throws {
        try await LiveServer.run { api in
            let bad = try await api.call(.get, "/v1/audit/access?collaboration=nonsense", as: "aud", roles: ["auditor"])
            #expect(bad.status == .badRequest && bad.body.errorCode == "invalid_query", "\(bad.raw)")
            let unknown = try await api.call(.get, "/v1/audit/access?collaboration=\(UUID())", as: "aud", roles: ["auditor"])
            #expect(unknown.status == .ok, "\(unknown.raw)")
            #expect(unknown.body["records"] == .array([]))
            let huge = try await api.call(.get, "/v1/accounts/me/collaborations?minPosition=18446744073709551615", as: "aud")
            #expect(huge.status == .badRequest && huge.body.errorCode == "invalid_query", "\(huge.raw)")
            // PostgreSQL text cannot hold NUL: refused before the query (the fuzzer found a 500 here).
            let nul = try await api.call(.get, "/v1/audit/access?account=a%00b&format=csv", as: "aud", roles: ["auditor"])
            #expect(nul.status == .badRequest && nul.body.errorCode == "invalid_query", "\(nul.raw)")
        }
    }

    @Test("minPosition: past the log's head a 400; views that stay behind 503 view_behind, never stale")
    func minPositionBounds() async throws {
        try await LiveServer.run(configuration: .testing { $0.readWait = .milliseconds(300) }) { api in
            let start = try await api.call(.post, "/v1/collaborations", as: "owner", json: startBody)
            let id = try #require(start.body["collaborationId"]?.string)
            let position = try #require(start.body["position"]?.int)
            let past = try await api.call(.get, "/v1/accounts/me/collaborations?minPosition=\(position + 1000)", as: "owner")
            #expect(past.status == .badRequest && past.body.errorCode == "invalid_query", "\(past.raw)")
            try await waitUntil(timeout: .seconds(60), "views at \(position)") {
                let rows = try await api.db.query("SELECT min(position) FROM ledger_projections")
                for try await reached in rows.decode(Int64.self) { return reached >= position }
                return false
            }
            let caughtUp = try await api.call(.get, "/v1/collaborations/\(id)?minPosition=\(position)", as: "owner")
            #expect(caughtUp.status == .ok, "\(caughtUp.raw)")
            // One view held back (stopped, as after a poison event); a newer write's position is not reached.
            try await api.db.query("UPDATE ledger_projections SET status = 'stopped' WHERE name = 'highlights'")
            let posted = try await api.call(
                .post, "/v1/collaborations/\(id)/highlights", as: "owner", json: #"{"kind":"change","trigger":"edit"}"#)
            let newer = try #require(posted.body["position"]?.int)
            let token = try await api.token("owner")
            let behind = try await api.execute(
                uri: "/v1/collaborations/\(id)?minPosition=\(newer)", method: .get, headers: [.authorization: "Bearer \(token)"])
            #expect(behind.status == .serviceUnavailable, "\(String(buffer: behind.body))")
            #expect(String(buffer: behind.body).contains("view_behind"))
            #expect(behind.headers[.retryAfter] == "1")
        }
    }
}
