import Foundation
import HTTPTypes
import LedgerDomain
import LedgerPostgres
import LedgerWire
import LedgerProjections
import LedgerStore
import NIOCore
import PostgresNIO

/// The reads of what happened: a collaboration's events, its notices, and the access audit.
extension CollaborationService {
    /// Every event of the collaboration, in order: the stream itself, not a view.
    public func history(_ id: String, caller: Caller) async throws -> History {
        let collaborationId = try Identifiers.collaborationId(id)
        let recorded = try await store.readStream(Streams.collaboration(collaborationId), afterVersion: 0)
        guard let first = recorded.first, case .started(let started) = try CollaborationEvent(first) else {
            throw DomainError(.notFound, "not_found", "collaboration not found")
        }
        guard caller.account == started.owner || caller.isAuditor else {
            throw DomainError(.forbidden, "not_owner_or_auditor", "history is for the owner and auditors")
        }
        let entries = try recorded.map { record in
            let metadata = try? CanonicalJSON.decode(EventMetadata.self, from: record.metadata)
            return History.Entry(
                position: record.position, version: record.version, type: record.type, time: record.recordedAt,
                actor: metadata?.actor, data: try CanonicalJSON.decode(JSONValue.self, from: record.data))
        }
        return History(collaborationId: collaborationId, events: entries)
    }

    /// Notices the caller may see: change and persistence notices for everyone with access,
    /// mentions only for the account holding the mentioned identity, and membership notices
    /// per account (SPEC, highlight events): `addedCollaborator` when an account first gains
    /// access, `removedCollaborator` when it has lost it. Another device of the same person
    /// (a second grant of an identity the account holds) is not a new collaborator: an account's
    /// identities held are counted over its grants (an identity's first grant since it was
    /// last revoked: +1) and revocations (-1), and a notice marks 0 -> 1 and 1 -> 0.
    public func highlights(_ id: String, caller: Caller) async throws -> Highlights {
        let row = try await collaborationRow(try Identifiers.collaborationId(id))
        try await requireReader(row, caller, auditorToo: false)
        let mine = try await grantedIdentity(row.id, account: caller.account)
        let notices = try await client.queryUnlessClosed(
            """
            WITH changes AS (
                SELECT position, account, at,
                       CASE WHEN change = 'revoked' THEN -1
                            WHEN lag(change) OVER (PARTITION BY account, root_hash ORDER BY position) IS DISTINCT FROM 'granted' THEN 1
                            ELSE 0 END AS step
                FROM proj_access_history WHERE collaboration_id = \(row.id) AND change IN ('granted', 'revoked')),
            held AS (
                SELECT position, account, at, step, sum(step) OVER (PARTITION BY account ORDER BY position) AS identities
                FROM changes WHERE step <> 0)
            SELECT position, kind, trigger, mentioned_root_hash, account, (extract(epoch FROM at) * 1000000)::int8
            FROM proj_highlights
            WHERE collaboration_id = \(row.id) AND (kind <> 'mention' OR mentioned_root_hash = \(mine))
            UNION ALL
            SELECT position, 'membership', CASE step WHEN 1 THEN 'addedCollaborator' ELSE 'removedCollaborator' END,
                   NULL, account, (extract(epoch FROM at) * 1000000)::int8
            FROM held WHERE (step = 1 AND identities = 1) OR (step = -1 AND identities = 0)
            ORDER BY 1
            """, logger: logger
        ) { rows in
            var notices: [Highlights.Notice] = []
            for try await (position, kind, trigger, mentioned, account, micros)
                in rows.decode((Int64, String, String?, String?, String, Int64).self)
            {
                notices.append(Highlights.Notice(
                    position: position, kind: kind, trigger: trigger, mentionedRootHash: mentioned, accountId: account,
                    time: Self.date(micros)))
            }
            return notices
        }
        return Highlights(collaborationId: row.id, highlights: notices)
    }

    /// Who gained and lost access when, from the access history.
    public func auditAccess(
        caller: Caller, account: String?, collaborationId: String?, from: Date?, to: Date?, limit: Int = 100_000
    ) async throws -> AccessAudit {
        guard caller.isAuditor else { throw DomainError(.forbidden, "not_auditor", "the access audit is for auditors") }
        // A filter, not a lookup: a well-formed id that matches nothing gives no records.
        let collaboration = try collaborationId.map { id in
            guard let uuid = UUID(uuidString: id) else {
                throw DomainError.invalid("collaboration must be a collaboration id (a UUID)", code: "invalid_query")
            }
            return uuid.uuidString.lowercased()
        }
        let records = try await client.queryUnlessClosed(
            """
            SELECT position, (extract(epoch FROM at) * 1000000)::int8, collaboration_id, account, root_hash, change, reason, actor
            FROM proj_access_history
            WHERE change IN ('granted', 'revoked')
              AND (\(account)::text IS NULL OR account = \(account))
              AND (\(collaboration)::text IS NULL OR collaboration_id = \(collaboration))
              AND (\(from.map(Self.micros))::int8 IS NULL OR at >= to_timestamp(\(from.map(Self.micros))::float8 / 1000000))
              AND (\(to.map(Self.micros))::int8 IS NULL OR at <= to_timestamp(\(to.map(Self.micros))::float8 / 1000000))
            ORDER BY position LIMIT \(limit)
            """, logger: logger
        ) { rows in
            var records: [AccessAudit.Record] = []
            for try await (position, micros, collab, account, hash, change, reason, actor)
                in rows.decode((Int64, Int64, String, String?, String, String, String?, String?).self)
            {
                records.append(AccessAudit.Record(
                    position: position, time: Self.date(micros), collaborationId: collab, accountId: account ?? "",
                    rootHash: hash, change: change, reason: reason, actor: actor))
            }
            return records
        }
        return AccessAudit(records: records)
    }
}
