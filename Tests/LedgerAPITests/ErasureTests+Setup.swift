import Foundation
import LedgerAPI
import LedgerClient
import LedgerDeviceSimulator
import LedgerDomain
import LedgerLog
import LedgerPostgres
import LedgerProjections
import LedgerStore
import LedgerTestSupport
import LedgerTokens
import LedgerWebhooks
import Logging
import PostgresNIO
import Synchronization
import Testing
import TransparencyLog

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The erasure tests' person, setup and reads: devin in two collaborations, as owner and initiator,
/// member and actor, with every kind of personal value.
extension ErasureTests {
    /// The erased person's values, unique to this run so a dump cannot find them elsewhere: every
    /// free text a caller gives, and the Idempotency-Key and X-Request-Id it sends.
    struct Person {
        let tag = String(UInt32.random(in: 0 ... .max), radix: 16)
        var account: String { "devin-\(tag)" }
        var handle: String { "devin.\(tag)@example.com" }
        var name: String { "Devin Q\(tag)" }
        var title: String { "Lisbon trip \(tag)" }
        var localIdentifier: String { "lisbon-\(tag).doc" }
        var summary: String { "Only Devin's family \(tag)" }
        var groupTitle: String { "Who edits \(tag)" }
        var optionTitle: String { "Devin's cousins \(tag)" }
        var idempotencyKey: String { "start-lisbon-\(tag)" }
        var requestId: String { "req-devin-\(tag)" }
        var values: [String] {
            [account, handle, name, title, localIdentifier, summary, groupTitle, optionTitle, idempotencyKey, requestId]
        }
        var options: ShareOptions {
            ShareOptions(
                summary: summary,
                groups: [
                    .init(
                        identifier: "permission", title: groupTitle, kind: .picker,
                        options: [
                            .init(identifier: "rw", title: optionTitle, selected: true),
                            .init(identifier: "ro", title: "Read only", selected: false),
                        ])
                ])
        }

        /// The values `text` holds (none, once erased).
        func found(in text: String) -> [String] { values.filter { text.contains($0) } }
    }

    static func json(_ value: some Encodable) throws -> String {
        String(decoding: try APIJSON.encoder().encode(value), as: UTF8.self)
    }

    /// Every read listed in the SPEC, as text: the collaboration, members (now and as of a time),
    /// history, notices, my collaborations, the audit and its exports.
    static func reads(_ s: Setup, minPosition: Int64, asOf: Date) async throws -> [String: String] {
        let (c1, c2) = (s.c1, s.c2)
        var reads: [String: String] = [:]
        reads["collaboration 1"] = try json(try await s.alice.collaboration(c1, minPosition: minPosition))
        reads["collaboration 2"] = try json(try await s.carol.collaboration(c2, minPosition: minPosition))
        for id in [c1, c2] {
            reads["members \(id)"] = try json(try await s.auditor.members(of: id, minPosition: minPosition))
            reads["members \(id) as of"] = try json(try await s.auditor.members(of: id, asOf: asOf, minPosition: minPosition))
            reads["history \(id)"] = try json(try await s.auditor.history(of: id, minPosition: minPosition))
        }
        reads["notices"] = try json(try await s.carol.highlights(in: c2, minPosition: minPosition))
        reads["alice's collaborations"] = try json(try await s.alice.myCollaborations(minPosition: minPosition))
        reads["alice's list"] = try await s.raw("/v1/collaborations?minPosition=\(minPosition)", as: "alice")
        reads["carol's collaborations"] = try json(try await s.carol.myCollaborations(minPosition: minPosition))
        reads["audit"] = try json(try await s.auditor.auditAccess(minPosition: minPosition))
        for format in ["csv", "ndjson"] {
            reads["audit \(format)"] = try await s.raw(
                "/v1/audit/access?format=\(format)&minPosition=\(minPosition)", as: "auditor", roles: ["auditor"])
        }
        return reads
    }

    struct Setup: Sendable {
        let server: LiveServer
        let person: Person
        let c1: String, c2: String
        let started: Int64, granted: Int64, notices: [Int64]
        var devin: LedgerClient { server.client(person.account) }
        var alice: LedgerClient { server.client("alice") }
        var carol: LedgerClient { server.client("carol") }
        var auditor: LedgerClient { server.client("auditor", roles: ["auditor"]) }
        var officer: LedgerClient { server.client("officer", roles: ["privacy"]) }

        func raw(_ path: String, as account: String, roles: [String] = []) async throws -> String {
            var request = URLRequest(url: URL(string: server.baseURL.absoluteString + path)!)
            request.setValue(
                "Bearer \(try await server.authority.issue(account: account, roles: roles))", forHTTPHeaderField: "Authorization")
            let (data, _) = try await TestHTTP.data(for: request)
            return String(decoding: data, as: UTF8.self)
        }

        func post(
            _ path: String, as account: String, roles: [String] = [], json: String, headers: [String: String] = [:]
        ) async throws -> (status: Int, body: String) {
            var request = URLRequest(url: URL(string: server.baseURL.absoluteString + path)!)
            request.httpMethod = "POST"
            request.httpBody = Data(json.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.setValue(
                "Bearer \(try await server.authority.issue(account: account, roles: roles))", forHTTPHeaderField: "Authorization")
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            let (data, response) = try await TestHTTP.data(for: request)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
        }

        /// The erasure as the API answers it, body as sent.
        func erase(_ account: String, reason: String) async throws -> (status: Int, body: String) {
            try await post(
                "/v1/privacy/erasures", as: "officer", roles: ["privacy"],
                json: String(decoding: try JSONEncoder().encode(ErasureRequest(account: account, reason: reason)), as: UTF8.self))
        }
    }

    /// devin starts collaboration 1 (every free text, an idempotency key, retried once) with alice
    /// granted; carol's collaboration 2 grants devin, who posts notices in both (one with an
    /// X-Request-Id).
    static func setUp(_ server: LiveServer, _ person: Person, webhook: URL) async throws -> Setup {
        let devin = server.client(person.account)
        let carol = server.client("carol")
        let c1 = try await devin.prepareCollaboration(
            localIdentifier: person.localIdentifier, title: person.title, initiator: Initiator(handle: person.handle, name: person.name),
            options: person.options, idempotencyKey: person.idempotencyKey)
        // A retry compares the values it was sent with those kept (the key only as a digest).
        let retried = try await devin.prepareCollaboration(
            localIdentifier: person.localIdentifier, title: person.title, initiator: Initiator(handle: person.handle, name: person.name),
            options: person.options, idempotencyKey: person.idempotencyKey)
        #expect(retried.identifier == c1.identifier && retried.url == c1.url)
        let alicePerson = SimulatedPerson(collaborationId: c1.identifier, devices: 1)
        _ = try await devin.updateParticipants(added: [alicePerson.rootHashData], in: c1.identifier)
        _ = try await verify(server.client("alice"), alicePerson, in: c1.identifier)
        let c2 = try await carol.prepareCollaboration(
            localIdentifier: "board", title: "Carol's board", initiator: Initiator(handle: "carol@example.com"))
        _ = try await carol.registerWebhook(url: webhook.appendingPathComponent("carol").absoluteString)
        let devinPerson = SimulatedPerson(collaborationId: c2.identifier, devices: 1)
        _ = try await carol.updateParticipants(added: [devinPerson.rootHashData], in: c2.identifier)
        guard case .granted(_, _, let granted) = try await verify(devin, devinPerson, in: c2.identifier) else {
            Issue.record("devin's proof was not granted")
            throw CancellationError()
        }
        let notices = [
            try await devin.postHighlight(.change, trigger: "edit", in: c2.identifier),
            try await devin.postHighlight(.mention, mentioning: alicePerson.rootHashData, in: c1.identifier),
        ]
        let s = Setup(
            server: server, person: person, c1: c1.identifier, c2: c2.identifier, started: c1.position, granted: granted, notices: notices)
        let commented = try await s.post(
            "/v1/collaborations/\(c1.identifier)/highlights", as: person.account, json: #"{"kind":"change","trigger":"comment"}"#,
            headers: ["X-Request-Id": person.requestId])
        #expect(commented.status == 201, "\(commented.body)")
        return s
    }

    /// The latest checkpoint once it covers `position`.
    static func checkpoint(_ s: Setup, covering position: Int64, key: NoteVerifier) async throws -> (note: String, checkpoint: Checkpoint) {
        try await waitUntil(timeout: .seconds(30), "a checkpoint covering \(position)") {
            (try? Checkpoint.open(try await s.auditor.checkpoint(), verifier: key).size) ?? 0 >= position
        }
        let note = try await s.auditor.checkpoint()
        return (note, try Checkpoint.open(note, verifier: key))
    }
}
