import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerProjections
import LedgerStore
import LedgerWire
import NIOCore
import PostgresNIO

/// The reads of what happened: a collaboration's events, its notices, and the access audit.
extension Reads {
    /// A page of the collaboration's events, in order: the stream itself, not a view. The
    /// first page pins the stream's last position; later pages read no further.
    public func history(_ id: String, caller: Caller, limit: Int = PageCursors.defaultLimit, cursor: String? = nil) async throws -> History
    {
        let collaborationId = try Identifiers.collaborationId(id)
        let stream = Streams.collaboration(collaborationId)
        let resumed = try await cursors.decode(cursor, kind: .history, scope: collaborationId)
        let afterVersion = Int64(resumed?.after ?? "0") ?? 0
        // Whether the caller owns it (its first event names the owner) and the stream's last
        // position, then the page.
        let (found, owns, last) = try await client.queryUnlessClosed(
            """
            SELECT true, (e.data::json->>'owner') = ANY(ledger_account_names(\(caller.account))), s.position
            FROM ledger_streams s JOIN ledger_events e ON e.stream_id = s.stream_id AND e.version = 1
            WHERE s.stream_id = \(stream)
            """, logger: logger
        ) { rows -> (Bool, Bool, Int64) in
            for try await row in rows.decode((Bool, Bool?, Int64).self) { return (row.0, row.1 ?? false, row.2) }
            return (false, false, 0)
        }
        guard found else { throw DomainError.collaborationNotFound }
        guard owns || caller.isAuditor else {
            throw DomainError(.notOwnerOrAuditor, "history is for the owner and auditors")
        }
        let pinned = resumed?.position ?? last
        let recorded = try await client.queryUnlessClosed(
            """
            SELECT position, stream_id, version, event_id, event_type, data::text, metadata::text,
                   (extract(epoch FROM recorded_at) * 1000000)::int8, hash
            FROM ledger_events WHERE stream_id = \(stream) AND version > \(afterVersion) AND position <= \(pinned)
            ORDER BY version LIMIT \(Int64(limit + 1))
            """, logger: logger, EventStore.decodeEvents)
        let disclosure = try await Subjects(client: client, logger: logger).disclosure(for: recorded)
        let entries = try recorded.map { try History.Entry($0, disclosure: disclosure) }
        let (page, next) = try await self.page(entries, limit: limit) {
            PageCursors.Cursor(kind: .history, scope: collaborationId, position: pinned, after: String($0.version))
        }
        return History(collaborationId: collaborationId, events: page, nextCursor: next)
    }

    /// Notices the caller may see: change and persistence notices for everyone with access,
    /// mentions only for the account holding the mentioned identity, and membership notices
    /// per account (SPEC, highlight events): `addedCollaborator` when an account first gains
    /// access, `removedCollaborator` when it has lost it. Another device of the same person
    /// (a second grant of an identity the account holds) is not a new collaborator: an account's
    /// identities held are counted over its grants (an identity's first grant since it was
    /// last revoked or expired: +1), revocations and expiries (-1), and a notice marks 0 -> 1
    /// and 1 -> 0.
    /// In log order, a page at a time; the first page pins the views' position. A page reads at
    /// most a page of each kind and names the accounts of those alone (`ledger_account`): had
    /// every notice of the collaboration been named before the page was cut, a page would cost
    /// as much as the collaboration's whole history (`ledger-bench commands`, read-your-writes).
    public func highlights(
        _ id: String, caller: Caller, limit: Int = PageCursors.defaultLimit, cursor: String? = nil
    ) async throws -> Highlights {
        let row = try await collaborationRow(try Identifiers.collaborationId(id), caller: caller)
        try requireReader(row, caller, auditorToo: false)
        let resumed = try await cursors.decode(cursor, kind: .highlights, scope: row.id)
        let (after, pinned) = (Int64(resumed?.after ?? "0") ?? 0, resumed?.position ?? row.viewPosition)
        let mine = row.callerIdentity
        let notices = try await client.queryUnlessClosed(
            """
            WITH changes AS (
                SELECT position, account, at,
                       CASE WHEN change IN ('revoked', 'expired') THEN -1
                            WHEN lag(change) OVER (PARTITION BY account, root_hash ORDER BY position) IS DISTINCT FROM 'granted' THEN 1
                            ELSE 0 END AS step
                FROM proj_access_history
                WHERE collaboration_id = \(row.id) AND change IN ('granted', 'revoked', 'expired') AND account IS NOT NULL),
            held AS (
                SELECT position, account, at, step, sum(step) OVER (PARTITION BY account ORDER BY position) AS identities
                FROM changes WHERE step <> 0)
            SELECT n.position, n.kind, n.trigger, n.mentioned, ledger_account(n.account), (extract(epoch FROM n.at) * 1000000)::int8
            FROM (
                (SELECT position, kind, trigger, mentioned_root_hash AS mentioned, account, at
                 FROM proj_highlights
                 WHERE collaboration_id = \(row.id) AND (kind <> 'mention' OR mentioned_root_hash = \(mine))
                       AND position > \(after) AND position <= \(pinned)
                 ORDER BY position LIMIT \(Int64(limit + 1)))
                UNION ALL
                (SELECT position, 'membership', CASE step WHEN 1 THEN 'addedCollaborator' ELSE 'removedCollaborator' END,
                        NULL, account, at
                 FROM held WHERE ((step = 1 AND identities = 1) OR (step = -1 AND identities = 0))
                       AND position > \(after) AND position <= \(pinned)
                 ORDER BY position LIMIT \(Int64(limit + 1)))
            ) n
            ORDER BY n.position LIMIT \(Int64(limit + 1))
            """, logger: logger
        ) { rows in
            var notices: [Highlights.Notice] = []
            for try await (position, kind, trigger, mentioned, account, micros)
                in rows.decode((Int64, String, String?, String?, String, Int64).self)
            {
                notices.append(
                    Highlights.Notice(
                        position: position, kind: kind, trigger: trigger, mentionedRootHash: mentioned, accountId: account,
                        time: RecordedTime.date(micros: micros)))
            }
            return notices
        }
        let (page, next) = try await self.page(notices, limit: limit) {
            PageCursors.Cursor(kind: .highlights, scope: row.id, position: pinned, after: String($0.position))
        }
        return Highlights(collaborationId: row.id, highlights: page, nextCursor: next)
    }

    /// Who gained and lost access when, from the access history, in log order a page at a time:
    /// grants, revocations and expiries of a granted identity (`dueAt`: the window's end); the
    /// first page pins the views' position, and its cursor is bound to the filters.
    public func auditAccess(
        caller: Caller, account: String?, collaborationId: String?, from: Date?, to: Date?, limit: Int = PageCursors.defaultLimit,
        cursor: String? = nil
    ) async throws -> AccessAudit {
        guard caller.isAuditor else { throw DomainError(.notAuditor, "the access audit is for auditors") }
        // A filter, not a lookup: a well-formed id that matches nothing gives no records.
        let collaboration = try collaborationId.map { id in
            guard let uuid = UUID(uuidString: id) else {
                throw DomainError.invalid("collaboration must be a collaboration id (a UUID)", code: .invalidQuery)
            }
            return uuid.uuidString.lowercased()
        }
        let filters = [account, collaboration, from.map { String(Self.micros($0)) }, to.map { String(Self.micros($0)) }]
        let scope = filters.map { $0.map { "\($0.utf8.count):\($0)" } ?? "-" }.joined(separator: ",")
        let resumed = try await cursors.decode(cursor, kind: .audit, scope: scope)
        let after = Int64(resumed?.after ?? "0") ?? 0
        let pinned: Int64
        if let resumed { pinned = resumed.position } else { pinned = try await viewPosition() }
        let records = try await client.queryUnlessClosed(
            """
            SELECT position, (extract(epoch FROM at) * 1000000)::int8, collaboration_id, ledger_account(account), root_hash, change,
                   reason, ledger_account(actor),
                   CASE WHEN change = 'expired' THEN (extract(epoch FROM not_after) * 1000000)::int8 END
            FROM proj_access_history
            WHERE (change IN ('granted', 'revoked') OR (change = 'expired' AND account IS NOT NULL))
              -- An auditor filters by an account (its pseudonym, or itself before pseudonyms) or by a pseudonym.
              AND (\(account)::text IS NULL OR account = ANY(ledger_account_names(\(account))) OR account = \(account))
              AND (\(collaboration)::text IS NULL OR collaboration_id = \(collaboration))
              AND (\(from.map(Self.micros))::int8 IS NULL OR at >= to_timestamp(\(from.map(Self.micros))::float8 / 1000000))
              AND (\(to.map(Self.micros))::int8 IS NULL OR at <= to_timestamp(\(to.map(Self.micros))::float8 / 1000000))
              AND position > \(after) AND position <= \(pinned)
            ORDER BY position LIMIT \(Int64(limit + 1))
            """, logger: logger
        ) { rows in
            var records: [AccessAudit.Record] = []
            for try await (position, micros, collab, account, hash, change, reason, actor, due)
                in rows.decode((Int64, Int64, String, String?, String, String, String?, String?, Int64?).self)
            {
                records.append(
                    AccessAudit.Record(
                        position: position, time: RecordedTime.date(micros: micros), collaborationId: collab, accountId: account ?? "",
                        rootHash: hash, change: change, reason: reason, actor: actor, dueAt: due.map(RecordedTime.date(micros:))))
            }
            return records
        }
        let (page, next) = try await self.page(records, limit: limit) {
            PageCursors.Cursor(kind: .audit, scope: scope, position: pinned, after: String($0.position))
        }
        return AccessAudit(records: page, nextCursor: next)
    }

    /// What `account` owned and held at `position` (the views must have reached it): where its
    /// change feed starts from, by the events (an identity held is one whose last grant,
    /// revocation or expiry for the account is a grant, with its window's bounds). The audience
    /// goes by the account's pseudonym (`subject`), as the events do.
    public func feedAudience(account: String, subject: String, at position: Int64) async throws -> FeedAudience {
        try await client.queryUnlessClosed(
            """
            WITH me AS MATERIALIZED (SELECT ledger_account_names(\(account)) AS names)
            SELECT collaboration_id, NULL::text, NULL::int8, NULL::int8 FROM proj_collaborations, me
            WHERE owner = ANY(me.names) AND started_position <= \(position)
            UNION ALL
            SELECT g.collaboration_id, g.root_hash, w.not_before, w.not_after
            FROM (
                SELECT DISTINCT ON (collaboration_id, root_hash) collaboration_id, root_hash, change
                FROM proj_access_history, me
                WHERE account = ANY(me.names) AND change IN ('granted', 'revoked', 'expired') AND position <= \(position)
                ORDER BY collaboration_id, root_hash, position DESC) g
            LEFT JOIN LATERAL (
                -- The held identity's window then: that of its last invitation or window change.
                SELECT (extract(epoch FROM h.not_before) * 1000000)::int8 AS not_before,
                       (extract(epoch FROM h.not_after) * 1000000)::int8 AS not_after
                FROM proj_access_history h
                WHERE h.collaboration_id = g.collaboration_id AND h.root_hash = g.root_hash AND h.change IN ('invited', 'window')
                  AND h.position <= \(position)
                ORDER BY h.position DESC LIMIT 1) w ON true
            WHERE g.change = 'granted'
            """, logger: logger
        ) { rows in
            var (owned, held, windows): (Set<String>, [String: Set<String>], [String: [String: FeedAudience.Bounds]]) = ([], [:], [:])
            for try await (collaboration, rootHash, start, end) in rows.decode((String, String?, Int64?, Int64?).self) {
                guard let rootHash else {
                    owned.insert(collaboration)
                    continue
                }
                held[collaboration, default: []].insert(rootHash)
                if start != nil || end != nil { windows[collaboration, default: [:]][rootHash] = .init(start: start, end: end) }
            }
            return FeedAudience(account: subject, owned: owned, held: held, windows: windows)
        }
    }
}
