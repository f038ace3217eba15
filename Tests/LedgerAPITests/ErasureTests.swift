import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LedgerAPI
import LedgerClient
import LedgerDeviceSimulator
import LedgerDomain
import LedgerLog
import LedgerPostgres
import LedgerProjections
import LedgerStore
import LedgerTestSupport
import LedgerWebhooks
import Logging
import PostgresNIO
import Synchronization
import Testing
import TransparencyLog

/// SPEC "Personal data and erasure", end to end on a live server and its real PostgreSQL: an
/// account that owned and started a collaboration, was granted on another and posted notices
/// is erased; none of its values is left in any read, the feed, a later webhook delivery, the
/// evidence or `pg_dump`, and every proof and checkpoint from before still verifies.
@Suite("Erasure")
struct ErasureTests {
    /// The erased person's values, unique to this run so a dump cannot find them elsewhere.
    struct Person {
        let tag = String(UInt32.random(in: 0 ... .max), radix: 16)
        var account: String { "devin-\(tag)" }
        var handle: String { "devin.\(tag)@example.com" }
        var name: String { "Devin Q\(tag)" }
        var title: String { "Lisbon trip \(tag)" }
        var values: [String] { [account, handle, name, title] }

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
        reads["carol's collaborations"] = try json(try await s.carol.myCollaborations(minPosition: minPosition))
        reads["audit"] = try json(try await s.auditor.auditAccess(minPosition: minPosition))
        for format in ["csv", "ndjson"] {
            reads["audit \(format)"] = try await s.raw("/v1/audit/access?format=\(format)&minPosition=\(minPosition)", as: "auditor", roles: ["auditor"])
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
            request.setValue("Bearer \(try await server.authority.issue(account: account, roles: roles))", forHTTPHeaderField: "Authorization")
            let (data, _) = try await URLSession.shared.data(for: request)
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// devin starts collaboration 1 (title, handle, name) with alice granted; carol's
    /// collaboration 2 grants devin, who posts notices in both.
    static func setUp(_ server: LiveServer, _ person: Person, webhook: URL) async throws -> Setup {
        let devin = server.client(person.account)
        let carol = server.client("carol")
        let c1 = try await devin.prepareCollaboration(
            localIdentifier: "doc-1", title: person.title, initiator: Initiator(handle: person.handle, name: person.name))
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
        return Setup(
            server: server, person: person, c1: c1.identifier, c2: c2.identifier, started: c1.position, granted: granted, notices: notices)
    }

    /// The latest checkpoint once it covers `position`.
    static func checkpoint(_ s: Setup, covering position: Int64, key: NoteVerifier) async throws -> (note: String, checkpoint: Checkpoint) {
        try await waitUntil(timeout: .seconds(30), "a checkpoint covering \(position)") {
            (try? Checkpoint.open(try await s.auditor.checkpoint(), verifier: key).size) ?? 0 >= position
        }
        let note = try await s.auditor.checkpoint()
        return (note, try Checkpoint.open(note, verifier: key))
    }

    @Test("an owner, initiator, member and actor erased: no value in any read, the feed, later webhooks, the evidence or pg_dump; every proof from before verifies; a rebuild gives the same views")
    func erasure() async throws {
        let person = Person()
        var deliveries = WebhookDeliverer.Settings()
        (deliveries.firstRetry, deliveries.longestRetry, deliveries.pollInterval) = (.milliseconds(20), .milliseconds(100), .milliseconds(50))
        let receiver = WebhookReceiver()
        // Refused until after the erasure: every delivery the receiver accepts is made after it.
        receiver.script("carol", Array(repeating: 503, count: 1_000_000))
        try await receiver.serving { [deliveries] webhookURL in
            try await LiveServer.run(deliveries: deliveries) { server in
                let s = try await Self.setUp(server, person, webhook: webhookURL)
                let officer = s.officer

                // Before: no plaintext in the events table, and the reads show every value.
                let stored = try await server.db.query("SELECT string_agg(data::text || metadata::text, ' ') FROM ledger_events")
                for try await text in stored.decode(String.self) { #expect(person.found(in: text) == [], "the events table holds plaintext") }
                let shown = try await s.alice.collaboration(s.c1, minPosition: s.notices.last)
                #expect(shown.title == person.title && shown.initiatorHandle == person.handle && shown.owner == person.account)
                #expect(try await s.auditor.auditAccess(account: person.account).records.map(\.position) == [s.granted])

                // Saved before: a checkpoint and the evidence of each event naming devin.
                let key = try NoteVerifier(try await s.auditor.logKey())
                let (savedNote, saved) = try await Self.checkpoint(s, covering: s.notices.last!, key: key)
                var evidence: [Int64: Evidence] = [:]
                for position in [s.started, s.granted] + s.notices { evidence[position] = try await s.auditor.evidence(position: position) }
                #expect(try EvidenceVerifier.verify(evidence[s.started]!, key: key).openingsChecked == 3)
                #expect(evidence[s.granted]!.accounts?.values.contains(person.account) == true)
                let exported = try await officer.exportPersonalData(account: person.account)
                #expect(Set(exported.values.map(\.value)) == [person.title, person.handle, person.name])
                #expect(Set([s.started, s.granted] + s.notices).isSubset(of: Set(exported.positions)))
                let before = Date()

                let erasure = try await officer.erasePersonalData(account: person.account, reason: "request 17")
                #expect(erasure.account == person.account && erasure.pseudonym.hasPrefix("psn-") && erasure.unerasedPositions == [])
                #expect(Set(erasure.values.map(\.kind)) == ["title", "handle", "name"])
                #expect(try await officer.erasePersonalData(account: person.account, reason: "again") == erasure)
                #expect(await rejection { _ = try await officer.exportPersonalData(account: person.account) }?.code == "not_found")

                // Every read: none of the values; the account as erased:<pseudonym>, the values null.
                let reads = try await Self.reads(s, minPosition: erasure.position, asOf: before)
                for (name, text) in reads { #expect(person.found(in: text) == [], "\(name): \(text)") }
                let erasedName = "erased:\(erasure.pseudonym)"
                let after = try await s.alice.collaboration(s.c1, minPosition: erasure.position)
                #expect(after.title == nil && after.initiatorHandle == nil && after.initiatorName == nil && after.owner == erasedName)
                #expect(reads["members \(s.c2)"]!.contains(erasedName) && reads["audit csv"]!.contains(erasedName))
                #expect(try await s.auditor.auditAccess(account: person.account).records == [])

                // The feed from 0, for carol (devin's grant and notice) and alice (the mention).
                for (account, last) in [("carol", s.notices[0]), ("alice", s.notices[1])] {
                    var seen: [History.Entry] = []
                    for try await event in server.client(account).feed(after: 0) {
                        seen.append(event.entry)
                        if event.id >= last { break }
                    }
                    #expect(seen.contains { $0.actor == erasedName }, "\(account)'s feed")
                    #expect(person.found(in: try Self.json(seen)) == [], "\(account)'s feed")
                }

                // Webhooks: carol's deliveries, all made after the erasure.
                receiver.script("carol", [])
                try await waitUntil(timeout: .seconds(30), "carol's webhook delivers devin's notice") {
                    receiver.accepted("carol").contains { $0.entry.position == s.notices[0] }
                }
                let bodies = receiver.accepted("carol").map { String(decoding: $0.body, as: UTF8.self) }
                #expect(bodies.contains { $0.contains(erasedName) })
                #expect(person.found(in: bodies.joined()) == [])

                // Evidence: saved before and fetched after both verify; after, no value.
                for (position, saved) in evidence {
                    let now = try await s.auditor.evidence(position: position)
                    #expect(person.found(in: try Self.json(now)) == [], "evidence \(position)")
                    #expect(try EvidenceVerifier.verify(now, key: key).openingsChecked == 0)
                    #expect(try EvidenceVerifier.verify(saved, key: key).position == position)
                }

                // The log: the checkpoint saved before, the chain, inclusion and consistency.
                let logger = Logger(label: "erasure-test")
                let report = try await LogVerification(
                    store: EventStore(client: server.db, logger: logger), tree: LogTree(client: server.db, logger: logger)
                ).run(saved: try Checkpoint.open(savedNote, verifier: key))
                #expect(report.failure == nil && report.checkpointFailure == nil && report.headPosition >= erasure.position)
                let (_, latest) = try await Self.checkpoint(s, covering: erasure.position, key: key)
                let consistency = try await s.auditor.consistencyProof(from: saved.size, to: latest.size)
                try MerkleProof.verifyConsistency(
                    size1: saved.size, size2: latest.size, root1: saved.rootHash, root2: latest.rootHash,
                    proof: consistency.hashes.map { Base64.decode($0)! })
                let inclusion = try await s.auditor.inclusionProof(position: s.started, treeSize: latest.size)
                try MerkleProof.verifyInclusion(
                    leafIndex: inclusion.leafIndex, treeSize: latest.size, leafHash: Base64.decode(inclusion.leafHash)!,
                    proof: inclusion.hashes.map { Base64.decode($0)! }, root: latest.rootHash)

                // No copy left in the database.
                let dump = try await Self.pgDump(server.settings)
                #expect(dump.contains("PersonalDataErased"), "the dump holds the log")
                #expect(person.found(in: dump) == [], "pg_dump holds erased values")

                // A rebuild of every projection gives the same erased views.
                for projection in Projection.allCases {
                    _ = try await ProjectionRebuild(client: server.db, logger: logger).run(projection)
                }
                #expect(try await Self.reads(s, minPosition: erasure.position, asOf: before) == reads)

                // devin acting again is a new subject; the erased one stays erased.
                let again = try await s.devin.prepareCollaboration(
                    localIdentifier: "doc-2", title: person.title, initiator: Initiator(handle: person.handle))
                let renewed = try await officer.exportPersonalData(account: person.account)
                #expect(renewed.pseudonym != erasure.pseudonym && renewed.positions == [again.position])
                #expect(try await s.alice.collaboration(s.c1, minPosition: again.position).owner == erasedName)
            }
        }
    }

    @Test("refusals: no role 403, an unknown account 404, a bad body 400; none changes anything")
    func refusals() async throws {
        try await LiveServer.run { server in
            let devin = server.client("devin")
            _ = try await devin.prepareCollaboration(localIdentifier: "d", title: "T", initiator: Initiator(handle: "devin@example.com"))
            let events = try await count(server.db)
            for roles in [[], ["auditor"]] {
                let client = server.client("someone", roles: roles)
                #expect(await rejection { _ = try await client.erasePersonalData(account: "devin", reason: "r") }?.code == "not_privacy_officer")
                #expect(await rejection { _ = try await client.exportPersonalData(account: "devin") }?.code == "not_privacy_officer")
            }
            let officer = server.client("officer", roles: ["privacy"])
            #expect(await rejection { _ = try await officer.erasePersonalData(account: "nobody", reason: "r") }?.code == "not_found")
            #expect(await rejection { _ = try await officer.exportPersonalData(account: "nobody") }?.code == "not_found")
            #expect(await rejection { _ = try await officer.erasePersonalData(account: "", reason: "r") }?.code == "invalid_value")
            #expect(await rejection { _ = try await officer.exportPersonalData(account: "") }?.code == "invalid_query")
            #expect(try await count(server.db) == events)
            #expect(try await officer.exportPersonalData(account: "devin").values.count == 2)
        }
    }

    @Test("an erasure racing with appends that name the account leaves no plaintext behind")
    func race() async throws {
        try await LiveServer.run { server in
            let devin = server.client("devin")
            let officer = server.client("officer", roles: ["privacy"])
            _ = try await devin.prepareCollaboration(localIdentifier: "first", title: "T", initiator: Initiator(handle: "devin@example.com"))
            // Writers start collaborations as devin until three each after the erasure answered.
            final class Flag: Sendable { let raised = Mutex(false) }
            let erased = Flag()
            let erasure = try await withThrowingTaskGroup(of: Erasure?.self) { group in
                for writer in 0 ..< 8 {
                    group.addTask {
                        var (n, after) = (0, 0)
                        while after < 3 {
                            if erased.raised.withLock({ $0 }) { after += 1 }
                            n += 1
                            _ = try await devin.prepareCollaboration(
                                localIdentifier: "w\(writer)-\(n)", title: "T", initiator: Initiator(handle: "devin@example.com", name: "D"))
                        }
                        return nil
                    }
                }
                group.addTask {
                    let erasure = try await officer.erasePersonalData(account: "devin", reason: "race")
                    erased.raised.withLock { $0 = true }
                    return erasure
                }
                var erasure: Erasure?
                for try await answer in group { erasure = erasure ?? answer }
                return erasure!
            }
            // Every event naming the erased pseudonym, before or after the erasure's event: no
            // value of it is kept, and reads show it erased.
            let kept = try await server.db.query(
                """
                SELECT count(*), count(v.commitment) FROM ledger_events e
                LEFT JOIN ledger_personal_values v ON v.commitment IN (e.data->>'title', e.data->>'initiatorHandle', e.data->>'initiatorName')
                WHERE e.data->>'owner' = \(erasure.pseudonym)
                """)
            for try await (events, values) in kept.decode((Int64, Int64).self) {
                #expect(events >= 1 && values == 0, "\(values) values of \(events) erased events kept")
            }
            // The writers that lost the race went on as a new subject, whose values are kept.
            let renewed = try await officer.exportPersonalData(account: "devin")
            #expect(renewed.pseudonym != erasure.pseudonym)
            #expect(renewed.values.allSatisfy { $0.value == "T" || $0.value == "devin@example.com" || $0.value == "D" })
        }
    }

    /// `pg_dump` of the whole database, as its owner.
    static func pgDump(_ settings: DatabaseSettings) async throws -> String {
        let environment = ProcessInfo.processInfo.environment.merging(["PGPASSWORD": settings.password ?? ""]) { $1 }
        return try await ProcessRunner.check(
            try EmbeddedPostgres.binaries() + "/pg_dump",
            ["-h", settings.host, "-p", String(settings.port), "-U", settings.username, "-d", settings.database], environment: environment)
    }
}
