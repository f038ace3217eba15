import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerProjections
import LedgerStore
import LedgerWire
import Logging
import NIOCore
import PostgresNIO

/// The reads the API serves, from the projections (see `Migrations/sql/0003_projections.sql`),
/// except the history, which is the collaboration's stream itself, on one database (the primary
/// or a standby: `ReadClient` chooses). Every answer's `position` is the log position the views
/// reflect; a caller that needs its own write asks `ReadClient` for `minPosition`.
public struct Reads: Sendable {
    let client: PostgresClient
    let cursors: PageCursors
    let logger: Logger

    /// The lowest position the views have all reached.
    func viewPosition() async throws -> Int64 {
        try await ProjectionQueries.position(of: Projection.allCases, client: client, logger: logger)
    }

    struct CollaborationRow {
        var id: String
        /// Personal values as reads show them: nil once erased.
        var localIdentifier: String?
        var title: String?
        var initiatorHandle: String?
        var initiatorName: String?
        /// The owner's account (`erased:<pseudonym>` once erased).
        var owner: String
        var universalLink: String
        var shareOptions: ShareOptions?
        var startedAt: Date
        /// The position every view had reached, read in the same statement as the row.
        var viewPosition: Int64
        /// Whether the caller owns it, and the identity granted to it there, if any.
        var callerOwns: Bool
        var callerIdentity: String?
    }

    /// The collaboration's row as the caller may see it, the views' position and the caller's
    /// standing there (whether it owns it; else, unless an auditor, the identity granted to it,
    /// if its window holds now: started and not ended), in one round trip (two cost ~1 ms more per read, measured on
    /// `members?asOf`). The caller goes by its pseudonym, or (rows older than pseudonyms) its
    /// account: `ledger_account_names`.
    func collaborationRow(_ id: String, caller: Caller) async throws -> CollaborationRow {
        try await client.queryUnlessClosed(
            """
            WITH caller AS (SELECT ledger_account_names(\(caller.account)) AS names)
            SELECT ledger_value(local_identifier), ledger_value(title), ledger_value(initiator_handle), ledger_value(initiator_name),
                   ledger_account(owner), universal_link, ledger_share_options(share_options)::text,
                   (extract(epoch FROM started_at) * 1000000)::int8,
                   (SELECT coalesce(min(position), 0) FROM ledger_projections WHERE name = ANY(\(Projection.allCases.map(\.rawValue)))),
                   owner = ANY(caller.names),
                   CASE WHEN owner = ANY(caller.names) OR \(caller.isAuditor) THEN NULL ELSE
                       (SELECT m.root_hash FROM proj_members m
                        WHERE m.collaboration_id = \(id) AND m.account = ANY(caller.names)
                          AND ledger_member_state(m.state, m.not_before, m.not_after, now()) = 'granted' LIMIT 1) END
            FROM proj_collaborations, caller WHERE collaboration_id = \(id)
            """, logger: logger
        ) { rows in
            for try await (local, title, handle, name, owner, link, options, micros, position, owns, identity)
                in rows.decode((String?, String?, String?, String?, String, String, String?, Int64, Int64, Bool, String?).self)
            {
                return CollaborationRow(
                    id: id, localIdentifier: local, title: title, initiatorHandle: handle, initiatorName: name, owner: owner,
                    universalLink: link, shareOptions: try options.map { try CanonicalJSON.decode(ShareOptions.self, from: $0) },
                    startedAt: RecordedTime.date(micros: micros), viewPosition: position, callerOwns: owns, callerIdentity: identity)
            }
            throw DomainError.collaborationNotFound
        }
    }

    /// The owner, accounts granted through a current identity, and (where allowed) auditors.
    func requireReader(_ collaboration: CollaborationRow, _ caller: Caller, auditorToo: Bool = true) throws {
        if collaboration.callerOwns || (auditorToo && caller.isAuditor) || collaboration.callerIdentity != nil { return }
        throw DomainError(.noAccess, "the caller has no access to this collaboration")
    }

    public func collaboration(_ id: String, caller: Caller) async throws -> Collaboration {
        let row = try await collaborationRow(try Identifiers.collaborationId(id), caller: caller)
        let position = row.viewPosition
        try requireReader(row, caller)
        // As of now: a window that has ended counts as expired before its AccessExpired is folded.
        let memberCounts = try await client.queryUnlessClosed(
            """
            SELECT count(*) FILTER (WHERE s = 'invited'), count(*) FILTER (WHERE s = 'granted'),
                   count(*) FILTER (WHERE s = 'removed'), count(*) FILTER (WHERE s = 'expired'),
                   count(*) FILTER (WHERE s = 'scheduled')
            FROM (SELECT ledger_member_state(state, not_before, not_after, now()) AS s FROM proj_members WHERE collaboration_id = \(row.id)) m
            """, logger: logger
        ) { counts in
            for try await (invited, granted, removed, expired, scheduled) in counts.decode((Int64, Int64, Int64, Int64, Int64).self) {
                return Collaboration.MemberCounts(
                    invited: Int(invited), granted: Int(granted), removed: Int(removed), expired: Int(expired), scheduled: Int(scheduled))
            }
            return Collaboration.MemberCounts(invited: 0, granted: 0, removed: 0, expired: 0, scheduled: 0)
        }
        return Collaboration(
            collaborationId: row.id, localIdentifier: row.localIdentifier, title: row.title,
            initiatorHandle: row.initiatorHandle, initiatorName: row.initiatorName, owner: row.owner,
            universalLink: row.universalLink, shareOptions: row.shareOptions,
            selectedOptions: row.shareOptions?.selected ?? [:], memberCounts: memberCounts, startedAt: row.startedAt,
            position: position)
    }

    /// A page of identities (`limit`, in root hash order, after the cursor's), current or (time
    /// travel) as they stood at a position or a time: the member fold (`ledger_members_page`,
    /// Migrations/functions), one range scan of the access history in root hash order, cut off
    /// after the page. The first page's position (the views', `atPosition` capped at them, or the
    /// last membership change at or before `asOf`) is pinned in the cursor, so every page of a
    /// walk reads at it. States are time-correct: read now or `asOf`, an invited or granted
    /// identity whose window had ended by then is `expired`, even where its `AccessExpired` was
    /// appended later (or not yet), and a granted one whose window had not started is `scheduled`;
    /// `atPosition` answers by the events alone. That moment is
    /// pinned in the cursor too.
    public func members(
        _ id: String, caller: Caller, atPosition: Int64? = nil, asOf: Date? = nil, limit: Int = PageCursors.defaultLimit,
        cursor: String? = nil
    ) async throws -> Members {
        let row = try await collaborationRow(try Identifiers.collaborationId(id), caller: caller)
        try requireReader(row, caller)
        let resumed = try await cursors.decode(cursor, kind: .members, scope: row.id)
        let target = resumed?.position ?? atPosition.map { min($0, row.viewPosition) } ?? row.viewPosition
        // asOf: the change recorded last at or before it (the later in the log of changes recorded
        // in the same microsecond), one step of the index on (collaboration, at, position).
        let micros: Int64? = resumed == nil ? asOf.map(Self.micros) : nil
        // The moment states are read as of: a later page's, its cursor's; a first page's, `asOf`,
        // the database's now (a current read), or none (`atPosition`: by the events).
        let readsNow = resumed == nil && asOf == nil && atPosition == nil
        let time: Int64? = resumed?.time ?? micros
        let (position, at, members) = try await client.queryUnlessClosed(
            """
            WITH p AS MATERIALIZED (
                SELECT CASE WHEN \(micros)::int8 IS NULL THEN \(target)::int8 ELSE coalesce((
                    SELECT position FROM proj_access_history
                    WHERE collaboration_id = \(row.id) AND at <= timestamptz 'epoch' + \(micros)::int8 * interval '1 microsecond'
                    ORDER BY at DESC, position DESC LIMIT 1
                ), 0) END AS position,
                CASE WHEN \(readsNow) THEN now() ELSE timestamptz 'epoch' + \(time)::int8 * interval '1 microsecond' END AS at
            )
            SELECT p.position, (extract(epoch FROM p.at) * 1000000)::int8,
                   m.root_hash, m.state, ledger_account(m.account), (extract(epoch FROM m.invited_at) * 1000000)::int8,
                   (extract(epoch FROM m.granted_at) * 1000000)::int8, (extract(epoch FROM m.not_before) * 1000000)::int8,
                   (extract(epoch FROM m.not_after) * 1000000)::int8
            FROM p LEFT JOIN LATERAL ledger_members_page(\(row.id), \(resumed?.after ?? ""), p.position, p.at, \(Int64(limit + 1))) m ON true
            """, logger: logger
        ) { rows in
            // Cell by cell: decoding each row as a tuple (`rows.decode((…).self)`) cost ~2 ms
            // more for 1,636 members (generic metadata looked up per row).
            var position = target
            var at = time
            var members: [Members.Member] = []
            for try await row in rows {
                let cells = PostgresRandomAccessRow(row)
                position = try cells[0].decode(Int64.self)
                at = try cells[1].decode(Int64?.self)
                guard let hash = try cells[2].decode(String?.self), let state = try cells[3].decode(String?.self) else { continue }
                members.append(
                    Members.Member(
                        rootHash: hash, state: state, accountId: try cells[4].decode(String?.self),
                        invitedAt: try cells[5].decode(Int64?.self).map(RecordedTime.date(micros:)),
                        grantedAt: try cells[6].decode(Int64?.self).map(RecordedTime.date(micros:)),
                        notBefore: try cells[7].decode(Int64?.self).map(RecordedTime.date(micros:)),
                        notAfter: try cells[8].decode(Int64?.self).map(RecordedTime.date(micros:))))
            }
            return (position, at, members)
        }
        let (page, next) = try await self.page(members, limit: limit) {
            PageCursors.Cursor(kind: .members, scope: row.id, position: position, after: $0.rootHash, time: at)
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
            WITH me AS MATERIALIZED (SELECT ledger_account_names(\(caller.account)) AS names)
            SELECT collaboration_id, ledger_value(title), 'owner', started_position FROM proj_collaborations, me WHERE owner = ANY(me.names)
            UNION ALL
            SELECT DISTINCT c.collaboration_id, ledger_value(c.title), 'member', c.started_position
            FROM me, proj_members m JOIN proj_collaborations c USING (collaboration_id)
            WHERE m.account = ANY(me.names) AND ledger_member_state(m.state, m.not_before, m.not_after, now()) = 'granted'
              AND c.owner <> ALL(me.names)
            ORDER BY 4
            """, logger: logger
        ) { rows in
            var result: [MyCollaborations.Entry] = []
            for try await (id, title, role, _) in rows.decode((String, String?, String, Int64).self) {
                result.append(MyCollaborations.Entry(collaborationId: id, title: title, role: role))
            }
            return result
        }
        return MyCollaborations(accountId: caller.account, collaborations: result)
    }

    static func micros(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1_000_000).rounded()) }
}
