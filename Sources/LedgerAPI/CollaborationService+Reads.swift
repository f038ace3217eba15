import Foundation
import HTTPTypes
import LedgerDomain
import LedgerPostgres
import LedgerWire
import LedgerProjections
import LedgerStore
import NIOCore
import PostgresNIO

/// Reads, served from the projections (see `Migrations/sql/0003_projections.sql`), except
/// the history, which is the collaboration's stream itself. Every answer's `position` is the
/// log position the views reflect; a caller that needs its own write passes `minPosition`.
extension CollaborationService {
    /// Waits (up to `readWait`) until every view has reached `position`. A view still behind
    /// then is a 503 `view_behind` with Retry-After, never an answer from before `position`.
    public func waitFor(position: Int64?) async throws {
        guard let position else { return }
        // The usual case, one query: the views are there already.
        if try await viewPosition() >= position { return }
        // Past the head, no write was ever acknowledged there: waiting could not help.
        let head = try await store.head().position
        guard position <= head else {
            throw DomainError.invalid("minPosition \(position) is past the log's head (\(head))", code: "invalid_query")
        }
        let reached = try await ProjectionQueries.waitFor(
            position, projections: Projection.allCases, client: client, logger: logger, timeout: readWait)
        guard reached >= position else {
            throw APIError(
                .serviceUnavailable, "view_behind",
                "the views are at position \(reached), behind minPosition \(position); retry shortly",
                headers: [.retryAfter: "1"])
        }
    }

    func viewPosition() async throws -> Int64 {
        try await ProjectionQueries.position(of: Projection.allCases, client: client, logger: logger)
    }

    struct CollaborationRow {
        var id: String
        var localIdentifier: String
        var title: String
        var initiatorHandle: String
        var initiatorName: String?
        var owner: String
        var universalLink: String
        var shareOptions: ShareOptions?
        var startedAt: Date
        /// The position every view had reached, read in the same statement as the row.
        var viewPosition: Int64
    }

    /// The collaboration's row and the views' position, in one round trip (two cost ~1 ms
    /// more per read, measured on `members?asOf`).
    func collaborationRow(_ id: String) async throws -> CollaborationRow {
        try await client.queryUnlessClosed(
            """
            SELECT local_identifier, title, initiator_handle, initiator_name, owner, universal_link, share_options::text,
                   (extract(epoch FROM started_at) * 1000000)::int8,
                   (SELECT coalesce(min(position), 0) FROM ledger_projections WHERE name = ANY(\(Projection.allCases.map(\.rawValue))))
            FROM proj_collaborations WHERE collaboration_id = \(id)
            """, logger: logger
        ) { rows in
            for try await (local, title, handle, name, owner, link, options, micros, position)
                in rows.decode((String, String, String, String?, String, String, String?, Int64, Int64).self)
            {
                return CollaborationRow(
                    id: id, localIdentifier: local, title: title, initiatorHandle: handle, initiatorName: name, owner: owner,
                    universalLink: link, shareOptions: try options.map { try CanonicalJSON.decode(ShareOptions.self, from: $0) },
                    startedAt: Self.date(micros), viewPosition: position)
            }
            throw DomainError(.notFound, "not_found", "collaboration not found")
        }
    }

    /// The owner, accounts granted through a current identity, and (where allowed) auditors.
    func requireReader(_ collaboration: CollaborationRow, _ caller: Caller, auditorToo: Bool = true) async throws {
        if caller.account == collaboration.owner || (auditorToo && caller.isAuditor) { return }
        guard try await grantedIdentity(collaboration.id, account: caller.account) != nil else {
            throw DomainError(.forbidden, "no_access", "the caller has no access to this collaboration")
        }
    }

    func grantedIdentity(_ id: String, account: String) async throws -> String? {
        try await client.queryUnlessClosed(
            """
            SELECT root_hash FROM proj_members WHERE collaboration_id = \(id) AND account = \(account) AND state = 'granted' LIMIT 1
            """, logger: logger
        ) { rows in
            for try await hash in rows.decode(String.self) { return hash }
            return nil
        }
    }

    public func collaboration(_ id: String, caller: Caller) async throws -> Collaboration {
        let row = try await collaborationRow(try Identifiers.collaborationId(id))
        let position = row.viewPosition
        try await requireReader(row, caller)
        let memberCounts = try await client.queryUnlessClosed(
            """
            SELECT count(*) FILTER (WHERE state = 'invited'), count(*) FILTER (WHERE state = 'granted'),
                   count(*) FILTER (WHERE state = 'removed')
            FROM proj_members WHERE collaboration_id = \(row.id)
            """, logger: logger
        ) { counts in
            for try await (invited, granted, removed) in counts.decode((Int64, Int64, Int64).self) {
                return Collaboration.MemberCounts(invited: Int(invited), granted: Int(granted), removed: Int(removed))
            }
            return Collaboration.MemberCounts(invited: 0, granted: 0, removed: 0)
        }
        return Collaboration(
            collaborationId: row.id, localIdentifier: row.localIdentifier, title: row.title,
            initiatorHandle: row.initiatorHandle, initiatorName: row.initiatorName, owner: row.owner,
            universalLink: row.universalLink, shareOptions: row.shareOptions,
            selectedOptions: row.shareOptions?.selected ?? [:], memberCounts: memberCounts, startedAt: row.startedAt,
            position: position)
    }

    /// Current identities, or (time travel) as they stood at a position or a time: the
    /// current members unchanged since, and the others folded from their access history
    /// (`ledger_members_at`, `Migrations/sql/0008`).
    public func members(_ id: String, caller: Caller, atPosition: Int64? = nil, asOf: Date? = nil) async throws -> Members {
        let row = try await collaborationRow(try Identifiers.collaborationId(id))
        let current = row.viewPosition
        try await requireReader(row, caller)
        var members: [Members.Member] = []
        var position = current
        if atPosition != nil || asOf != nil {
            // One query: the position (given, or the last membership change at or before
            // asOf), and the members as they stood there. The last change at or before asOf:
            // the collaboration's history walked back from its end (index on collaboration,
            // position) to the first row recorded at or before asOf; recording times are not
            // in position order, so the walk filters rather than seeks. The collaboration is
            // a range (>= and <=), not an equality, on purpose: with `=`, PostgreSQL drops it
            // from the ORDER BY and may walk back the whole history's primary key instead,
            // until a row of this collaboration turns up (22 ms on a 200k-event log; so did
            // max(position)). max(position + 0) read every row of the collaboration up to
            // asOf (2.9 ms at the end of a 10,000-event collaboration, 0.07 ms this way).
            // MATERIALIZED: inlined, it ran twice.
            let target: Int64? = atPosition.map { min($0, current) }
            let micros: Int64? = asOf.map(Self.micros)
            (position, members) = try await client.queryUnlessClosed(
                """
                WITH p AS MATERIALIZED (
                    SELECT coalesce(\(target), (
                        SELECT position FROM proj_access_history
                        WHERE collaboration_id >= \(row.id) AND collaboration_id <= \(row.id)
                          AND at <= timestamptz 'epoch' + \(micros) * interval '1 microsecond'
                        ORDER BY collaboration_id DESC, position DESC LIMIT 1
                    ), 0) AS position
                )
                SELECT p.position, m.root_hash, m.state, m.account, (extract(epoch FROM m.invited_at) * 1000000)::int8,
                       (extract(epoch FROM m.granted_at) * 1000000)::int8
                FROM p LEFT JOIN LATERAL ledger_members_at(\(row.id), p.position) m ON true
                ORDER BY m.root_hash
                """, logger: logger
            ) { rows in
                // Cell by cell: decoding each row as a tuple (`rows.decode((…).self)`) cost ~2 ms
                // more for 1,636 members (generic metadata looked up per row), a fifth of the query.
                var position = current
                var members: [Members.Member] = []
                for try await row in rows {
                    let cells = PostgresRandomAccessRow(row)
                    position = try cells[0].decode(Int64.self)
                    guard let hash = try cells[1].decode(String?.self), let state = try cells[2].decode(String?.self) else { continue }
                    members.append(Members.Member(
                        rootHash: hash, state: state, accountId: try cells[3].decode(String?.self),
                        invitedAt: try cells[4].decode(Int64?.self).map(Self.date),
                        grantedAt: try cells[5].decode(Int64?.self).map(Self.date)))
                }
                return (position, members)
            }
        } else {
            members = try await client.queryUnlessClosed(
                """
                SELECT root_hash, state, account, (extract(epoch FROM invited_at) * 1000000)::int8,
                       (extract(epoch FROM granted_at) * 1000000)::int8
                FROM proj_members WHERE collaboration_id = \(row.id) AND state <> 'removed' ORDER BY root_hash
                """, logger: logger
            ) { rows in
                var members: [Members.Member] = []
                for try await row in rows {
                    let cells = PostgresRandomAccessRow(row)
                    members.append(Members.Member(
                        rootHash: try cells[0].decode(String.self), state: try cells[1].decode(String.self),
                        accountId: try cells[2].decode(String?.self), invitedAt: try cells[3].decode(Int64?.self).map(Self.date),
                        grantedAt: try cells[4].decode(Int64?.self).map(Self.date)))
                }
                return members
            }
        }
        return Members(collaborationId: row.id, owner: row.owner, position: position, members: members)
    }

    public func myCollaborations(caller: Caller) async throws -> MyCollaborations {
        let result = try await client.queryUnlessClosed(
            """
            SELECT collaboration_id, title, 'owner', started_position FROM proj_collaborations WHERE owner = \(caller.account)
            UNION ALL
            SELECT DISTINCT c.collaboration_id, c.title, 'member', c.started_position
            FROM proj_members m JOIN proj_collaborations c USING (collaboration_id)
            WHERE m.account = \(caller.account) AND m.state = 'granted' AND c.owner <> \(caller.account)
            ORDER BY 4
            """, logger: logger
        ) { rows in
            var result: [MyCollaborations.Entry] = []
            for try await (id, title, role, _) in rows.decode((String, String, String, Int64).self) {
                result.append(MyCollaborations.Entry(collaborationId: id, title: title, role: role))
            }
            return result
        }
        return MyCollaborations(accountId: caller.account, collaborations: result)
    }

    static func date(_ micros: Int64) -> Date { Date(timeIntervalSince1970: Double(micros) / 1_000_000) }
    static func micros(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1_000_000).rounded()) }
}
