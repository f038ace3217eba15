import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerWire
import PostgresNIO

extension Reads {
    /// The collaborations the caller may see (auditors: all; others: those it owns or holds a
    /// granted identity in, its window not ended), newest first, a page at a time, read at the
    /// first page's position. Member counts are as of now (`Collaboration.MemberCounts`).
    /// `query`: a case-insensitive part of the (plaintext) local identifier or title: an erased
    /// one matches nothing.
    public func collaborations(
        caller: Caller, query: String?, limit: Int = PageCursors.defaultLimit, cursor: String? = nil
    ) async throws -> CollaborationList {
        let scope = "\(caller.isAuditor ? "*" : caller.account.utf8.count.description + ":" + caller.account)|\(query ?? "")"
        let resumed = try await cursors.decode(cursor, kind: .collaborations, scope: scope)
        let before = Int64(resumed?.after ?? "") ?? .max
        let pinned: Int64
        if let resumed { pinned = resumed.position } else { pinned = try await viewPosition() }
        let pattern = query.map {
            "%"
                + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
                .replacingOccurrences(of: "_", with: "\\_") + "%"
        }
        let entries = try await client.queryUnlessClosed(
            """
            WITH me AS MATERIALIZED (SELECT ledger_account_names(\(caller.account)) AS names)
            SELECT c.collaboration_id, ledger_value(c.local_identifier), ledger_value(c.title), ledger_account(c.owner),
                   (extract(epoch FROM c.started_at) * 1000000)::int8, c.started_position,
                   -- One pass over the members: invited, granted, removed, expired, scheduled.
                   (SELECT ARRAY[count(*) FILTER (WHERE n.s = 'invited'), count(*) FILTER (WHERE n.s = 'granted'),
                                 count(*) FILTER (WHERE n.s = 'removed'), count(*) FILTER (WHERE n.s = 'expired'),
                                 count(*) FILTER (WHERE n.s = 'scheduled')]
                    FROM (SELECT ledger_member_state(m.state, m.not_before, m.not_after, now()) AS s FROM proj_members m
                          WHERE m.collaboration_id = c.collaboration_id) n)
            FROM proj_collaborations c, me
            WHERE c.started_position <= \(pinned) AND c.started_position < \(before)
              AND (\(caller.isAuditor) OR c.owner = ANY(me.names) OR EXISTS (
                  SELECT 1 FROM proj_members m WHERE m.collaboration_id = c.collaboration_id AND m.account = ANY(me.names)
                     AND ledger_member_state(m.state, m.not_before, m.not_after, now()) = 'granted'))
              AND (\(pattern)::text IS NULL OR ledger_value(c.local_identifier) ILIKE \(pattern) OR ledger_value(c.title) ILIKE \(pattern))
            ORDER BY c.started_position DESC LIMIT \(Int64(limit + 1))
            """, logger: logger
        ) { rows in
            var entries: [(CollaborationList.Entry, Int64)] = []
            for try await (id, local, title, owner, micros, position, counts)
                in rows.decode((String, String?, String?, String, Int64, Int64, [Int64]).self)
            {
                let count = { (i: Int) in counts.indices.contains(i) ? Int(counts[i]) : 0 }
                entries.append(
                    (
                        CollaborationList.Entry(
                            collaborationId: id, localIdentifier: local, title: title, owner: owner,
                            startedAt: RecordedTime.date(micros: micros),
                            memberCounts: .init(
                                invited: count(0), granted: count(1), removed: count(2), expired: count(3), scheduled: count(4))), position
                    ))
            }
            return entries
        }
        let (page, next) = try await self.page(entries, limit: limit) {
            PageCursors.Cursor(kind: .collaborations, scope: scope, position: pinned, after: String($0.1))
        }
        return CollaborationList(collaborations: page.map(\.0), nextCursor: next, position: pinned)
    }
}
