import Foundation
import HTTPTypes
import LedgerAPI
import LedgerConfiguration
import LedgerDomain
import LedgerStore
import LedgerTestSupport
import LedgerWire
import Logging
import PostgresNIO
import Synchronization
import Testing

/// Paged list reads: every walk of the pages gives exactly the unpaged answer, at the first
/// page's position, while writes go on.
@Suite("Paged reads")
struct PagingTests {
    static func rootHash() throws -> RootHash { try RootHash(bytes: (0..<32).map { _ in UInt8.random(in: 0...255) }) }

    /// Appends `events` to the collaboration through the command loop (its inline state kept).
    static func append(_ api: LiveServer, _ id: String, _ events: [CollaborationEvent]) async throws -> Int64 {
        let store = EventStore(client: api.db, logger: Logger(label: "test"))
        return try await CollaborationStreams(store: store).decideAndAppend(id) { _ in
            .init(events: events, metadata: EventMetadata(actor: "devin"))
        }.position
    }

    static func grant(_ hash: RootHash, to account: String) -> CollaborationEvent {
        .accessGranted(
            .init(
                rootHash: hash, account: account, proofRequestId: UUID().uuidString.lowercased(),
                challengeId: UUID().uuidString.lowercased(),
                proof: IdentityProof(
                    publicKey: [4] + [UInt8](repeating: 1, count: 64), publicKeyIndex: 0,
                    inclusionHashes: [[UInt8](repeating: 2, count: 32)]),
                challenge: [UInt8](repeating: 3, count: 32), signature: [UInt8](repeating: 5, count: 64)))
    }

    /// devin's collaboration with `count` identities: every tenth granted (to 50 accounts), every
    /// 13th removed, every 17th granted one revoked, and a notice per 20 identities.
    static func large(_ api: LiveServer, identities count: Int) async throws -> (id: String, hashes: [RootHash], head: Int64) {
        let id = try await api.call(.post, "/v1/collaborations", as: "devin", json: startBody).body["collaborationId"]!.string!
        let hashes = try (0..<count).map { _ in try rootHash() }
        var head: Int64 = 0
        for chunk in stride(from: 0, to: count, by: 500) {
            let slice = hashes[chunk..<min(count, chunk + 500)]
            head = try await append(api, id, slice.map { .identityAdded(.init(rootHash: $0)) })
            var events: [CollaborationEvent] = []
            for (offset, hash) in slice.enumerated() {
                let n = chunk + offset
                if n % 10 == 0 { events.append(grant(hash, to: "user\(n % 50)")) }
                if n % 13 == 0 { events.append(.identityRemoved(.init(rootHash: hash, account: nil))) }
                if n % 170 == 0 { events.append(.accessRevoked(.init(rootHash: hash, account: "user\(n % 50)", reason: "test"))) }
                if n % 20 == 0 {
                    events.append(.highlightPosted(.init(kind: .change, trigger: "edit \(n)", mentionedRootHash: nil, account: "devin")))
                }
            }
            head = try await append(api, id, events)
        }
        return (id, hashes, head)
    }

    /// Writes that go on during a walk: identities added and removed, notices, grants.
    static func keepWriting(_ api: LiveServer, _ id: String, _ hashes: [RootHash]) -> Task<Void, any Error> {
        Task {
            for round in 0..<20 {
                let fresh = try rootHash()
                _ = try await append(
                    api, id,
                    [
                        .identityAdded(.init(rootHash: fresh)), grant(fresh, to: "late\(round)"),
                        .identityRemoved(.init(rootHash: hashes[round * 7 + 1], account: nil)),
                        .highlightPosted(.init(kind: .persistence, trigger: "late", mentionedRootHash: nil, account: "devin")),
                    ])
            }
        }
    }

    /// The members as the domain folds the stream up to `position`: root hash → "state account".
    static func fold(_ api: LiveServer, _ id: String, upTo position: Int64) async throws -> [String: String] {
        let store = EventStore(client: api.db, logger: Logger(label: "test"))
        var state: CollaborationState?
        for recorded in try await store.readStream(Streams.collaboration(id), afterVersion: 0) where recorded.position <= position {
            let event = try CollaborationEvent(recorded)
            if case .started(let started) = event { state = CollaborationState(started: started) } else { state?.apply(event) }
        }
        var members: [String: String] = [:]
        for (hash, identity) in state?.identities ?? [:] where identity.status != .removed {
            members[hash] = "\(identity.status.rawValue) \(identity.account ?? "-")"
        }
        return members
    }

    /// Every page of `path` (a query string may follow), `limit` at a time: the items under
    /// `key`, each page's body, and what `between` did after the first page.
    static func walk(
        _ api: LiveServer, _ path: String, key: String, limit: Int, as account: String = "devin", roles: [String] = [],
        between: (@Sendable () -> Void)? = nil
    ) async throws -> (items: [JSONValue], pages: [JSONValue]) {
        var (items, pages): ([JSONValue], [JSONValue]) = ([], [])
        var cursor: String?
        let separator = path.contains("?") ? "&" : "?"
        repeat {
            let r = try await api.call(
                .get, "\(path)\(separator)limit=\(limit)\(cursor.map { "&cursor=\($0)" } ?? "")", as: account, roles: roles)
            try #require(r.status == .ok, "\(r.raw)")
            items += r.body[key]?.array ?? []
            #expect((r.body[key]?.array.count ?? 0) <= limit)
            pages.append(r.body)
            cursor = r.body["nextCursor"]?.string
            if pages.count == 1 { between?() }
        } while cursor != nil
        return (items, pages)
    }

    static func member(_ value: JSONValue) -> (String, String) {
        (value["rootHash"]!.string!, "\(value["state"]!.string!) \(value["accountId"]?.string ?? "-")")
    }

    /// Members, current, at a position and as of a time: every page walk gives the domain's fold at
    /// the first page's position, none skipped or repeated, while writes go on.
    @Test("members paged during writes (current, at a position, as of a time): the fold at the first page")
    func members() async throws {
        try await LiveServer.run { api in
            let (id, hashes, head) = try await Self.large(api, identities: 2_600)
            let middle = head / 2
            // A time in the middle of the history: the page's position is the last change recorded by then.
            var asOf = ""
            for try await micros in try await api.db.query(
                "SELECT (extract(epoch FROM at) * 1000000)::int8 FROM proj_access_history WHERE position >= \(middle) ORDER BY position LIMIT 1"
            ).decode(Int64.self) {
                asOf = APIJSON.time(Date(timeIntervalSince1970: Double(micros) / 1_000_000))
            }
            for path in [
                "/v1/collaborations/\(id)/members?minPosition=\(head)",
                "/v1/collaborations/\(id)/members?atPosition=\(middle)&minPosition=\(head)",
                "/v1/collaborations/\(id)/members?asOf=\(asOf)&minPosition=\(head)",
            ] {
                let writes = Mutex<Task<Void, any Error>?>(nil)
                let (items, pages) = try await Self.walk(api, path, key: "members", limit: 97) {
                    writes.withLock { $0 = Self.keepWriting(api, id, hashes) }
                }
                try await writes.withLock { $0 }?.value
                let position = try #require(pages.first?["position"]?.int)
                #expect(pages.allSatisfy { $0["position"]?.int == position }, "every page reads at the first page's position")
                let walked = items.map(Self.member)
                #expect(Set(walked.map(\.0)).count == walked.count, "no member twice")
                let expected = try await Self.fold(api, id, upTo: position)
                #expect(Dictionary(uniqueKeysWithValues: walked) == expected)
                #expect(pages.count == (expected.count + 96) / 97)
            }
        }
    }

    @Test("history, highlights and access audit paged during writes: the unpaged answer, in log order")
    func logOrderedLists() async throws {
        try await LiveServer.run { api in
            let (id, hashes, _) = try await Self.large(api, identities: 1_200)
            let store = EventStore(client: api.db, logger: Logger(label: "test"))
            for (path, key, account) in [
                ("/v1/collaborations/\(id)/history", "events", "devin"), ("/v1/collaborations/\(id)/highlights", "highlights", "devin"),
                ("/v1/audit/access?collaboration=\(id)", "records", "auditor"),
            ] {
                // Unpaged, just before the walk: the stream itself, or one page of up to 1,000.
                let head = try await store.head().position
                let separator = path.contains("?") ? "&" : "?"
                let expected: [Int64]
                if key == "events" {
                    expected = try await store.readStream(Streams.collaboration(id), afterVersion: 0).map(\.position)
                } else {
                    let unpaged = try await api.call(
                        .get, "\(path)\(separator)limit=1000&minPosition=\(head)", as: account, roles: ["auditor"])
                    #expect(unpaged.body["nextCursor"] == nil)
                    expected = unpaged.body[key]!.array.map { $0["position"]!.int! }
                }
                let writes = Mutex<Task<Void, any Error>?>(nil)
                let (items, _) = try await Self.walk(
                    api, "\(path)\(separator)minPosition=\(head)", key: key, limit: 17, as: account, roles: ["auditor"]
                ) {
                    writes.withLock { $0 = Self.keepWriting(api, id, hashes) }
                }
                try await writes.withLock { $0 }?.value
                #expect(items.map { $0["position"]!.int! } == expected, "\(key)")
                #expect(expected.count > 17 * 3, "\(key): several pages")
            }
        }
    }

    @Test("a limit of 0, -1, 1001 or not a number, and a forged or foreign cursor: 400 on every list read")
    func badPages() async throws {
        try await LiveServer.run { api in
            let (id, _, head) = try await Self.large(api, identities: 300)
            let other = try await api.call(.post, "/v1/collaborations", as: "devin", json: startBody).body["collaborationId"]!.string!
            let lists = [
                ("/v1/collaborations/\(id)/members", "/v1/collaborations/\(other)/members", "devin"),
                ("/v1/collaborations/\(id)/history", "/v1/collaborations/\(other)/history", "devin"),
                ("/v1/collaborations/\(id)/highlights", "/v1/collaborations/\(other)/highlights", "devin"),
                ("/v1/audit/access?collaboration=\(id)", "/v1/audit/access?account=user1", "auditor"),
            ]
            var cursors: [String] = []
            for (path, _, account) in lists {
                let separator = path.contains("?") ? "&" : "?"
                for limit in ["0", "-1", "1001", "ten", ""] {
                    let r = try await api.call(.get, "\(path)\(separator)limit=\(limit)", as: account, roles: ["auditor"])
                    #expect(r.status == .badRequest, "\(path) limit=\(limit): \(r.raw)")
                    #expect(r.body.errorCode == "invalid_query")
                }
                let first = try await api.call(.get, "\(path)\(separator)limit=2&minPosition=\(head)", as: account, roles: ["auditor"])
                cursors.append(try #require(first.body["nextCursor"]?.string, "\(path): \(first.raw)"))
            }
            for (index, (path, foreign, account)) in lists.enumerated() {
                let cursor = cursors[index]
                var forged = Array(cursor)
                forged[4] = forged[4] == "A" ? "B" : "A"
                for bad in [String(forged), "x" + cursor, "not-a-cursor", cursors[(index + 1) % cursors.count]] {
                    let separator = path.contains("?") ? "&" : "?"
                    let r = try await api.call(.get, "\(path)\(separator)cursor=\(bad)", as: account, roles: ["auditor"])
                    #expect(r.status == .badRequest, "\(path) cursor=\(bad): \(r.raw)")
                    #expect(r.body.errorCode == "invalid_cursor")
                }
                // Another collaboration's list (or other audit filters) refuses this list's cursor.
                let separator = foreign.contains("?") ? "&" : "?"
                let r = try await api.call(.get, "\(foreign)\(separator)cursor=\(cursor)", as: account, roles: ["auditor"])
                #expect(r.status == .badRequest, "\(foreign): \(r.raw)")
                #expect(r.body.errorCode == "invalid_cursor")
            }
        }
    }

    @Test("audit exports stream every record past a page of 1,000: NDJSON one per line, CSV with a header")
    func exports() async throws {
        try await LiveServer.run { api in
            let (id, _, head) = try await Self.large(api, identities: 12_000)
            let count = try await Self.walk(
                api, "/v1/audit/access?collaboration=\(id)&minPosition=\(head)", key: "records", limit: 1000, as: "auditor",
                roles: ["auditor"]
            ).items.count
            #expect(count > 1000)
            let ndjson = try await api.call(
                .get, "/v1/audit/access?collaboration=\(id)&format=ndjson", as: "auditor", roles: ["auditor"])
            #expect(ndjson.status == .ok)
            let lines = ndjson.raw.split(separator: "\n")
            #expect(lines.count == count)
            #expect(
                Set(lines.compactMap { try? JSONDecoder().decode(JSONValue.self, from: Data($0.utf8))["position"]?.int }).count == count)
            let csv = try await api.call(.get, "/v1/audit/access?collaboration=\(id)&format=csv", as: "auditor", roles: ["auditor"])
            let rows = csv.raw.split(separator: "\r\n")
            #expect(rows.first == "position,time,collaborationId,accountId,rootHash,change,reason,actor,dueAt")
            #expect(rows.count == count + 1)
        }
    }
}
