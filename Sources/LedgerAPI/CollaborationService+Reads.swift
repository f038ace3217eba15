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

    /// A page of identities (`limit`, in root hash order, after the cursor's), current or
    /// (time travel) as they stood at a position or a time: one range scan of the access history
    /// in root hash order, folded per identity as it streams by and cut off after the page
    /// (`Migrations/sql/0013`; the fold's rules are ledger_fold_members'). The first page's position (the views', `atPosition`
    /// capped at them, or the last membership change at or before `asOf`) is pinned in the
    /// cursor, so every page of a walk reads at it.
    public func members(
        _ id: String, caller: Caller, atPosition: Int64? = nil, asOf: Date? = nil, limit: Int = PageCursors.defaultLimit,
        cursor: String? = nil
    ) async throws -> Members {
        let row = try await collaborationRow(try Identifiers.collaborationId(id))
        try await requireReader(row, caller)
        let resumed = try await cursors.decode(cursor, kind: .members, scope: row.id)
        let target = resumed?.position ?? atPosition.map { min($0, row.viewPosition) } ?? row.viewPosition
        // asOf: the change recorded last at or before it (the later in the log of changes recorded
        // in the same microsecond), one step of the index on (collaboration, at, position).
        let micros: Int64? = resumed == nil ? asOf.map(Self.micros) : nil
        let (position, members) = try await client.queryUnlessClosed(
            """
            WITH p AS MATERIALIZED (
                SELECT CASE WHEN \(micros)::int8 IS NULL THEN \(target)::int8 ELSE coalesce((
                    SELECT position FROM proj_access_history
                    WHERE collaboration_id = \(row.id) AND at <= timestamptz 'epoch' + \(micros)::int8 * interval '1 microsecond'
                    ORDER BY at DESC, position DESC LIMIT 1
                ), 0) END AS position
            )
            SELECT p.position, m.root_hash, (ARRAY['invited', 'granted'])[m.st[2]],
                   CASE WHEN m.account_pos = m.gr[1] THEN substr(m.gr_account, 21) END, m.inv[2],
                   CASE WHEN m.gr[1] > coalesce(m.inv[1], 0) THEN m.gr[2] END
            FROM p LEFT JOIN LATERAL (
                -- Per identity: [position, value] of its last change of each kind (positions are
                -- unique, so max() is the last one). States: 1 invited, 2 granted, 3 removed.
                SELECT h.root_hash,
                    max(ARRAY[h.position, CASE h.change WHEN 'invited' THEN 1 WHEN 'granted' THEN 2 ELSE 3 END])
                        FILTER (WHERE h.change <> 'revoked') AS st,
                    max(ARRAY[h.position, (extract(epoch FROM h.at) * 1000000)::int8]) FILTER (WHERE h.change = 'invited') AS inv,
                    max(ARRAY[h.position, (extract(epoch FROM h.at) * 1000000)::int8]) FILTER (WHERE h.change = 'granted') AS gr,
                    max((lpad(h.position::text, 20, '0') || coalesce(h.account, '')) COLLATE "C")
                        FILTER (WHERE h.change = 'granted') AS gr_account,
                    max(h.position) FILTER (WHERE h.change IN ('invited', 'granted', 'revoked')) AS account_pos
                FROM proj_access_history h
                WHERE h.collaboration_id = \(row.id) AND h.root_hash > \(resumed?.after ?? "") AND h.position <= p.position
                GROUP BY h.root_hash
                HAVING coalesce((max(ARRAY[h.position, CASE h.change WHEN 'invited' THEN 1 WHEN 'granted' THEN 2 ELSE 3 END])
                           FILTER (WHERE h.change <> 'revoked'))[2], 3) <> 3
                ORDER BY h.root_hash LIMIT \(Int64(limit + 1))
            ) m ON true
            """, logger: logger
        ) { rows in
            // Cell by cell: decoding each row as a tuple (`rows.decode((…).self)`) cost ~2 ms
            // more for 1,636 members (generic metadata looked up per row).
            var position = target
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
        let (page, next) = try await self.page(members, limit: limit) {
            PageCursors.Cursor(kind: .members, scope: row.id, position: position, after: $0.rootHash)
        }
        return Members(collaborationId: row.id, owner: row.owner, position: position, members: page, nextCursor: next)
    }

    /// The first `limit` of `items` (read one more than a page, to know whether a next one
    /// exists), and the cursor after the last of them.
    func page<Item>(
        _ items: [Item], limit: Int, cursor: (Item) -> PageCursors.Cursor
    ) async throws -> ([Item], String?) {
        guard items.count > limit else { return (items, nil) }
        let page = Array(items.prefix(limit))
        return (page, try await cursors.encode(cursor(page[limit - 1])))
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
