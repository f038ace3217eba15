import LedgerDomain
import LedgerPostgres
import LedgerStore
import Logging
import PostgresNIO

/// Holds the views to the log: each view must be exactly what the domain's own fold of the log
/// gives, up to that view's checkpoint (`ledger projections verify`, the reliability suite).
///
/// The views and their checkpoints are read in one repeatable-read snapshot, so projectors may
/// keep running meanwhile; the log below a checkpoint never changes, so the fold reads it freely.
/// - membership: every identity of every collaboration (state and account, removed ones
///   included) against `CollaborationState` folded event by event;
/// - collaborations: one row per `CollaborationStarted`, no other;
/// - highlights: one row per `HighlightPosted`, at its position, no other.
public struct ViewAudit: Sendable {
    public struct Report: Sendable {
        /// Checkpoints the views were compared at.
        public var positions: [Projection: Int64]
        /// Collaborations the fold holds at the membership checkpoint.
        public var collaborations: Int
        /// Collaborations whose members differ, plus collaboration and highlight rows missing or extra.
        public var diverged: Int
        /// What differs, first few of each kind, readable.
        public var details: [String]

        public var consistent: Bool { diverged == 0 }
    }

    let client: PostgresClient
    let store: EventStore
    let logger: Logger

    public init(client: PostgresClient, store: EventStore, logger: Logger) {
        self.client = client
        self.store = store
        self.logger = logger
    }

    public func run(maxDetails: Int = 10) async throws -> Report {
        let snapshot = try await readViews()
        var report = Report(
            positions: snapshot.positions, collaborations: 0, diverged: snapshot.missingRows.count, details: [])
        report.details += snapshot.missingRows.prefix(maxDetails)

        let membership = snapshot.positions[.membership] ?? 0
        // On a shard a partition moved to or from, the log holds the other shard's past too: its
        // views hold only what the shard holds (docs/SCALING.md, "Adding a shard").
        let unheld = try await unheldCollaborations()
        let folded = try await Self.fold(store, upTo: membership).mapValues { $0.identities.mapValues(Member.init) }.filter {
            !$0.value.isEmpty && !unheld.contains($0.key)
        }
        report.collaborations = try await collaborationCount(upTo: membership)
        var differing = 0
        for id in Set(folded.keys).union(snapshot.members.keys).sorted() {
            let expected = folded[id] ?? [:]
            let actual = snapshot.members[id] ?? [:]
            guard expected != actual else { continue }
            differing += 1
            if differing <= maxDetails {
                let hashes = Set(expected.keys).union(actual.keys).filter { expected[$0] != actual[$0] }.sorted()
                let shown = hashes.prefix(3).map { hash in
                    "\(hash.prefix(12))…: log \(Self.describe(expected[hash])), view \(Self.describe(actual[hash]))"
                }
                report.details.append("membership of \(id) at \(membership): \(shown.joined(separator: "; "))")
            }
        }
        report.diverged += differing
        return report
    }

    /// What the members view keeps of an identity.
    struct Member: Equatable {
        var status: CollaborationState.IdentityStatus
        var account: String?
        var window: AccessWindow

        init(_ identity: CollaborationState.Identity) {
            (status, account, window) = (identity.status, identity.account, identity.window)
        }

        init(status: CollaborationState.IdentityStatus, account: String?, notBefore: Int64?, notAfter: Int64?) {
            (self.status, self.account) = (status, account)
            window = AccessWindow(stored: notBefore.map(RecordedTime.text(micros:)), notAfter.map(RecordedTime.text(micros:)))
        }
    }

    static func describe(_ member: Member?) -> String {
        guard let member else { return "absent" }
        let window = member.window.isUnbounded ? "" : " [\(member.window.notBefore ?? "…"), \(member.window.notAfter ?? "…"))"
        return (member.account.map { "\(member.status.rawValue) (\($0))" } ?? member.status.rawValue) + window
    }

    struct Snapshot {
        var positions: [Projection: Int64] = [:]
        var members: [String: [String: Member]] = [:]
        var missingRows: [String] = []
    }

    /// Checkpoints, the members view, and the collaboration and highlight rows that do not
    /// match the log's events (both ways), all from one snapshot.
    func readViews() async throws -> Snapshot {
        try await client.withConnection { connection in
            try await connection.queryUnlessClosed("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            do {
                var snapshot = Snapshot()
                let checkpoints = try await connection.queryUnlessClosed("SELECT name, position FROM ledger_projections", logger: logger)
                for try await (name, position) in checkpoints.decode((String, Int64).self) {
                    if let projection = Projection(rawValue: name) { snapshot.positions[projection] = position }
                }
                let membership = snapshot.positions[.membership] ?? 0
                let rows = try await connection.queryUnlessClosed(
                    """
                    SELECT collaboration_id, root_hash, state, account, (extract(epoch FROM not_before) * 1000000)::int8,
                           (extract(epoch FROM not_after) * 1000000)::int8
                    FROM proj_members WHERE position <= \(membership)
                    """, logger: logger)
                for try await (id, hash, state, account, notBefore, notAfter) in rows.decode(
                    (String, String, String, String?, Int64?, Int64?).self)
                {
                    guard let status = CollaborationState.IdentityStatus(rawValue: state) else {
                        snapshot.missingRows.append("proj_members \(id) \(hash): unknown state \(state)")
                        continue
                    }
                    snapshot.members[id, default: [:]][hash] = Member(
                        status: status, account: account, notBefore: notBefore, notAfter: notAfter)
                }
                let collaborations = snapshot.positions[.collaborations] ?? 0
                let highlights = snapshot.positions[.highlights] ?? 0
                let mismatches = try await connection.queryUnlessClosed(
                    """
                    (SELECT 'collaboration ' || ledger_stream_collaboration(stream_id) || ' started at ' || position || ' has no row in proj_collaborations'
                       FROM ledger_events WHERE event_type = 'CollaborationStarted' AND position <= \(collaborations)
                        AND ledger_holds(ledger_stream_collaboration(stream_id))
                        AND ledger_stream_collaboration(stream_id) NOT IN (SELECT collaboration_id FROM proj_collaborations))
                    UNION ALL
                    (SELECT 'proj_collaborations row ' || collaboration_id || ' is of a collaboration this shard does not hold'
                       FROM proj_collaborations WHERE NOT ledger_holds(collaboration_id))
                    UNION ALL
                    (SELECT 'proj_collaborations row ' || collaboration_id || ' has no CollaborationStarted at or below ' || \(collaborations)
                       FROM proj_collaborations c WHERE NOT EXISTS (
                         SELECT 1 FROM ledger_events e WHERE e.event_type = 'CollaborationStarted'
                            AND e.stream_id = ledger_collaboration_stream(c.collaboration_id) AND e.position <= \(collaborations)))
                    UNION ALL
                    (SELECT 'highlight at ' || position || ' has no row in proj_highlights'
                       FROM ledger_events WHERE event_type = 'HighlightPosted' AND position <= \(highlights)
                        AND ledger_holds(ledger_stream_collaboration(stream_id)) AND position NOT IN (SELECT position FROM proj_highlights))
                    UNION ALL
                    (SELECT 'proj_highlights row at ' || h.position || ' is not a HighlightPosted of ' || h.collaboration_id
                       FROM proj_highlights h WHERE NOT EXISTS (
                         SELECT 1 FROM ledger_events e WHERE e.position = h.position AND e.event_type = 'HighlightPosted'
                            AND e.stream_id = ledger_collaboration_stream(h.collaboration_id)))
                    """, logger: logger)
                for try await line in mismatches.decode(String.self) { snapshot.missingRows.append(line) }
                try await connection.queryUnlessClosed("COMMIT", logger: logger)
                return snapshot
            } catch {
                _ = try? await connection.queryUnlessClosed("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    /// Every collaboration's state, folded from the log by the domain's own fold, up to `position`.
    public static func fold(_ store: EventStore, upTo position: Int64 = .max) async throws -> [String: CollaborationState] {
        var states: [String: CollaborationState] = [:]
        var after: Int64 = 0
        while after < position {
            let batch = try await store.readAll(after: after, limit: 5000)
            guard !batch.isEmpty else { break }
            for record in batch where record.position <= position {
                guard let id = Streams.collaborationId(of: record.streamId) else { continue }
                let event = try CollaborationEvent(record)
                if case .started(let started) = event {
                    states[id] = CollaborationState(started: started)
                } else {
                    states[id]?.apply(event)
                }
            }
            after = batch.last!.position
        }
        return states
    }

    /// The collaborations of the log this shard does not hold (`ledger_holds`); none on one that
    /// holds everything.
    func unheldCollaborations() async throws -> Set<String> {
        try await client.queryUnlessClosed(
            """
            SELECT DISTINCT ledger_stream_collaboration(stream_id) FROM ledger_events
            WHERE event_type = 'CollaborationStarted' AND EXISTS (SELECT 1 FROM ledger_held_partitions)
              AND NOT ledger_holds(ledger_stream_collaboration(stream_id))
            """, logger: logger
        ) { rows in
            var ids: Set<String> = []
            for try await id in rows.decode(String.self) { ids.insert(id) }
            return ids
        }
    }

    func collaborationCount(upTo position: Int64) async throws -> Int {
        try await client.queryUnlessClosed(
            """
            SELECT count(*) FROM ledger_events
            WHERE event_type = 'CollaborationStarted' AND position <= \(position) AND ledger_holds(ledger_stream_collaboration(stream_id))
            """, logger: logger
        ) { rows in
            for try await count in rows.decode(Int64.self) { return Int(count) }
            return 0
        }
    }
}
