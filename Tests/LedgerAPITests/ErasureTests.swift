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
import LedgerWebhooks
import Logging
import PostgresNIO
import Synchronization
import Testing
import TransparencyLog

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// SPEC "Personal data and erasure", end to end on a live server and its real PostgreSQL: an
/// account that owned and started a collaboration, was granted on another and posted notices
/// is erased; none of its values is left in any read, the feed, a later webhook delivery, the
/// evidence or `pg_dump`, and every proof and checkpoint from before still verifies.
@Suite("Erasure")
struct ErasureTests {
    /// An owner, initiator, member and actor erased: no value in any read, the feed, later
    /// webhooks, the evidence or pg_dump; every proof from before verifies; a rebuild gives the
    /// same views.
    @Test("owner, initiator, member and actor erased: no value anywhere, old proofs verify, rebuilds agree")
    func erasure() async throws {
        let person = Person()
        var deliveries = WebhookDeliverer.Settings()
        (deliveries.firstRetry, deliveries.longestRetry, deliveries.pollInterval) = (
            .milliseconds(20), .milliseconds(100), .milliseconds(50)
        )
        let receiver = WebhookReceiver()
        // Refused until after the erasure: every delivery the receiver accepts is made after it.
        receiver.script("carol", Array(repeating: 503, count: 1_000_000))
        try await receiver.serving { [deliveries] webhookURL in
            try await LiveServer.run(deliveries: deliveries) { server in
                let s = try await Self.setUp(server, person, webhook: webhookURL)
                let officer = s.officer

                // Before: no plaintext in the events table, and the reads show every value.
                let stored = try await server.db.query("SELECT string_agg(data::text || metadata::text, ' ') FROM ledger_events")
                for try await text in stored.decode(String.self) {
                    #expect(person.found(in: text) == [], "the events table holds plaintext")
                }
                let shown = try await s.alice.collaboration(s.c1, minPosition: s.notices.last)
                #expect(shown.title == person.title && shown.initiatorHandle == person.handle && shown.owner == person.account)
                #expect(shown.localIdentifier == person.localIdentifier && shown.shareOptions == person.options)
                let searched = try await s.raw("/v1/collaborations?q=lisbon-\(person.tag)", as: "alice")
                #expect(searched.contains(s.c1) && searched.contains(person.localIdentifier), "\(searched)")
                #expect(try await s.auditor.auditAccess(account: person.account).records.map(\.position) == [s.granted])

                // Saved before: a checkpoint and the evidence of each event naming devin.
                let key = try NoteVerifier(try await s.auditor.logKey())
                let (savedNote, saved) = try await Self.checkpoint(s, covering: s.notices.last!, key: key)
                var evidence: [Int64: Evidence] = [:]
                for position in [s.started, s.granted] + s.notices { evidence[position] = try await s.auditor.evidence(position: position) }
                // Title, handle, name, local identifier, summary, a group's and two options' titles.
                #expect(try EvidenceVerifier.verify(evidence[s.started]!, key: key).openingsChecked == 8)
                let opened = Set((evidence[s.started]!.openings ?? []).map(\.value))
                #expect(opened.isSuperset(of: [person.localIdentifier, person.optionTitle]))
                #expect(evidence[s.granted]!.accounts?.values.contains(person.account) == true)
                let exported = try await officer.exportPersonalData(account: person.account)
                #expect(
                    Set(exported.values.map(\.value)) == [
                        person.title, person.handle, person.name, person.localIdentifier, person.summary, person.groupTitle,
                        person.optionTitle, "Read only",
                    ])
                #expect(exported.values.allSatisfy { $0.positions == [s.started] }, "\(exported.values)")
                #expect(Set([s.started, s.granted] + s.notices).isSubset(of: Set(exported.positions)))
                let before = Date()

                // The answer names no pseudonym; a repeat and an unknown account find nothing held.
                let answered = try await s.erase(person.account, reason: "TICKET-17")
                #expect(answered.status == 200 && !answered.body.contains("psn-") && !answered.body.contains("held"), "\(answered.body)")
                let erasure = try APIJSON.decoder().decode(Erasure.self, from: Data(answered.body.utf8))
                let erasedAt = try #require(erasure.position)
                #expect(erasure.held && erasure.erasedAt != nil && erasure.unerasedPositions == [])
                #expect(
                    erasure.values == [
                        .init(kind: "groupTitle", count: 1), .init(kind: "handle", count: 1), .init(kind: "localIdentifier", count: 1),
                        .init(kind: "name", count: 1), .init(kind: "optionTitle", count: 2), .init(kind: "summary", count: 1),
                        .init(kind: "title", count: 1),
                    ])
                for account in [person.account, "never-known-\(person.tag)"] {
                    let repeated = try await s.erase(account, reason: "TICKET-17")
                    #expect(repeated.status == 200 && repeated.body == #"{"held":false}"#, "\(repeated.body)")
                }
                #expect(try await officer.erasePersonalData(account: person.account, reason: "TICKET-17").held == false)
                #expect(await rejection { _ = try await officer.exportPersonalData(account: person.account) }?.code == "not_found")

                // Every read: none of the values; the account as erased:<pseudonym>, the values null.
                let reads = try await Self.reads(s, minPosition: erasedAt, asOf: before)
                for (name, text) in reads { #expect(person.found(in: text) == [], "\(name): \(text)") }
                let erasedName = "erased:\(exported.pseudonym)"
                let after = try await s.alice.collaboration(s.c1, minPosition: erasedAt)
                #expect(after.title == nil && after.initiatorHandle == nil && after.initiatorName == nil && after.owner == erasedName)
                #expect(
                    after.localIdentifier == nil && after.shareOptions?.summary == nil && after.selectedOptions == ["permission": ["rw"]])
                #expect(
                    after.shareOptions?.groups.map(\.title) == [nil]
                        && after.shareOptions?.groups.first?.options.map(\.title) == [nil, nil])
                #expect(try await s.raw("/v1/collaborations?q=lisbon-\(person.tag)", as: "alice").contains(s.c1) == false)
                #expect(reads["alice's list"]!.contains(#""localIdentifier":null"#), "\(reads["alice's list"]!)")
                #expect(reads["members \(s.c2)"]!.contains(erasedName) && reads["audit csv"]!.contains(erasedName))
                #expect(try await s.auditor.auditAccess(account: person.account).records == [])
                #expect(
                    reads["history \(s.c1)"]!.contains(#""localIdentifier":null"#) && !reads["history \(s.c1)"]!.contains("commitment:"))

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
                #expect(report.failure == nil && report.checkpointFailure == nil && report.headPosition >= erasedAt)
                let (_, latest) = try await Self.checkpoint(s, covering: erasedAt, key: key)
                let consistency = try await s.auditor.consistencyProof(from: saved.size, to: latest.size)
                try MerkleProof.verifyConsistency(
                    size1: saved.size, size2: latest.size, root1: saved.rootHash, root2: latest.rootHash,
                    proof: consistency.hashes.map { Base64.decode($0)! })
                let inclusion = try await s.auditor.inclusionProof(position: s.started, treeSize: latest.size)
                try MerkleProof.verifyInclusion(
                    leafIndex: inclusion.leafIndex, treeSize: latest.size, leafHash: Base64.decode(inclusion.leafHash)!,
                    proof: inclusion.hashes.map { Base64.decode($0)! }, root: latest.rootHash)

                // No copy left in the database, and nothing in it that links devin to the pseudonym.
                let dump = try await Self.pgDump(server.settings)
                #expect(dump.contains("PersonalDataErased"), "the dump holds the log")
                #expect(person.found(in: dump) == [], "pg_dump holds erased values")
                Self.expectNoLink(dump: dump, person: person, pseudonym: exported.pseudonym)

                // A rebuild of every projection gives the same erased views.
                for projection in Projection.allCases {
                    _ = try await ProjectionRebuild(client: server.db, logger: logger).run(projection)
                }
                #expect(try await Self.reads(s, minPosition: erasedAt, asOf: before) == reads)

                // devin acting again is a new subject; the erased one stays erased.
                let again = try await s.devin.prepareCollaboration(
                    localIdentifier: "doc-2", title: person.title, initiator: Initiator(handle: person.handle))
                let renewed = try await officer.exportPersonalData(account: person.account)
                #expect(renewed.pseudonym != exported.pseudonym && renewed.positions == [again.position])
                #expect(try await s.alice.collaboration(s.c1, minPosition: again.position).owner == erasedName)
            }
        }
    }

    /// Refusals: no role 403, a bad body or a reason that is not a short reference 400; an unknown
    /// account is not held; none changes anything.
    @Test("refusals: no role 403, a bad body or reason 400, an unknown account not held; nothing changes")
    func refusals() async throws {
        try await LiveServer.run { server in
            let devin = server.client("devin")
            _ = try await devin.prepareCollaboration(localIdentifier: "d", title: "T", initiator: Initiator(handle: "devin@example.com"))
            let events = try await count(server.db)
            for roles in [[], ["auditor"]] {
                let client = server.client("someone", roles: roles)
                #expect(
                    await rejection { _ = try await client.erasePersonalData(account: "devin", reason: "r") }?.code == "not_privacy_officer"
                )
                #expect(await rejection { _ = try await client.exportPersonalData(account: "devin") }?.code == "not_privacy_officer")
            }
            let officer = server.client("officer", roles: ["privacy"])
            #expect(try await officer.erasePersonalData(account: "nobody", reason: "r") == .notHeld())
            #expect(await rejection { _ = try await officer.exportPersonalData(account: "nobody") }?.code == "not_found")
            #expect(await rejection { _ = try await officer.erasePersonalData(account: "", reason: "r") }?.code == "invalid_value")
            #expect(await rejection { _ = try await officer.exportPersonalData(account: "") }?.code == "invalid_query")
            // The reason enters the log for ever: a short reference only (^[A-Za-z0-9._:/#-]{1,64}$).
            let refused = [
                "", "request 17", "Devin asked by mail", String(repeating: "a", count: 65), "TICKET-1\n", "tïcket-1", "a@b.c", "<b>",
                "ticket;1",
            ]
            for reason in refused {
                let error = await rejection { _ = try await officer.erasePersonalData(account: "devin", reason: reason) }
                #expect(error?.status == 400 && error?.code == "invalid_value", "\(reason): \(String(describing: error))")
                #expect(error?.message.contains("^[A-Za-z0-9._:/#-]{1,64}$") == true, "\(String(describing: error))")
            }
            for reason in ["TICKET-17", "gdpr/2026#17:a.b_c-d", String(repeating: "Z", count: 64)] {
                #expect(try await officer.erasePersonalData(account: "nobody", reason: reason).held == false, "\(reason)")
            }
            #expect(try await count(server.db) == events)
            // devin's title, handle and local identifier.
            #expect(try await officer.exportPersonalData(account: "devin").values.count == 3)
        }
    }

    @Test("an erasure racing with appends that name the account leaves no plaintext behind")
    func race() async throws {
        try await LiveServer.run { server in
            let devin = server.client("devin")
            let officer = server.client("officer", roles: ["privacy"])
            _ = try await devin.prepareCollaboration(
                localIdentifier: "first", title: "T", initiator: Initiator(handle: "devin@example.com"))
            let pseudonym = try await officer.exportPersonalData(account: "devin").pseudonym
            // Writers start collaborations as devin until three each after the erasure answered.
            final class Flag: Sendable { let raised = Mutex(false) }
            let erased = Flag()
            let erasure = try await withThrowingTaskGroup(of: Erasure?.self) { group in
                for writer in 0..<8 {
                    group.addTask {
                        var (n, after) = (0, 0)
                        while after < 3 {
                            if erased.raised.withLock({ $0 }) { after += 1 }
                            n += 1
                            _ = try await devin.prepareCollaboration(
                                localIdentifier: "w\(writer)-\(n)", title: "T", initiator: Initiator(handle: "devin@example.com", name: "D")
                            )
                        }
                        return nil
                    }
                }
                group.addTask {
                    let erasure = try await officer.erasePersonalData(account: "devin", reason: "RACE-1")
                    erased.raised.withLock { $0 = true }
                    return erasure
                }
                var erasure: Erasure?
                for try await answer in group { erasure = erasure ?? answer }
                return erasure!
            }
            #expect(erasure.held)
            // Every event naming the erased pseudonym, before or after the erasure's event: no
            // value of it is kept, and reads show it erased.
            let kept = try await server.db.query(
                """
                SELECT count(*), count(v.commitment) FROM ledger_events e
                LEFT JOIN ledger_personal_values v
                       ON v.commitment IN (e.data->>'title', e.data->>'initiatorHandle', e.data->>'initiatorName', e.data->>'localIdentifier')
                WHERE e.data->>'owner' = \(pseudonym)
                """)
            for try await (events, values) in kept.decode((Int64, Int64).self) {
                #expect(events >= 1 && values == 0, "\(values) values of \(events) erased events kept")
            }
            // The writers that lost the race went on as a new subject, whose values are kept.
            let renewed = try await officer.exportPersonalData(account: "devin")
            #expect(renewed.pseudonym != pseudonym)
            #expect(renewed.values.allSatisfy { ["T", "devin@example.com", "D"].contains($0.value) || $0.kind == "localIdentifier" })
        }
    }
}
