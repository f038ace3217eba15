import Foundation
import LedgerDomain
import LedgerStore
import PostgresNIO

/// Reads. Until the projections land they fold the log directly; the answers' shapes are the
/// contract and stay when they move to the views.
extension CollaborationService {
    struct Folded {
        var started: CollaborationEvent.Started
        var startedAt: Date
        var state: CollaborationState
        var position: Int64
        var records: [(RecordedEvent, CollaborationEvent)]

        static func replay(
            started: CollaborationEvent.Started, startedAt: Date, records: [(RecordedEvent, CollaborationEvent)]
        ) -> Folded {
            var state = CollaborationState(started: started)
            for (_, event) in records { state.apply(event) }
            return Folded(
                started: started, startedAt: startedAt, state: state, position: records.last!.0.position,
                records: records)
        }

        /// The same stream as it stood at a position or a time (time travel), without reading it again.
        func upTo(atPosition: Int64?, asOf: Date?) -> Folded {
            // The start always stays: before it, the collaboration is as it was started.
            let kept = records.prefix(1) + records.dropFirst().prefix { record, _ in
                (atPosition.map { record.position <= $0 } ?? true) && (asOf.map { record.recordedAt <= $0 } ?? true)
            }
            return .replay(started: started, startedAt: startedAt, records: Array(kept))
        }
    }

    /// The whole stream, read and decoded once, folded to its current state.
    func fold(_ collaborationId: String) async throws -> Folded {
        let stream = Streams.collaboration(try Identifiers.collaborationId(collaborationId))
        let recorded = try await store.readStream(stream, afterVersion: 0)
        guard let first = recorded.first, case .started(let started) = try CollaborationEvent(first) else {
            throw DomainError(.notFound, "not_found", "collaboration not found")
        }
        let records = try recorded.map { ($0, try CollaborationEvent($0)) }  // never empty: it holds the start
        return Folded.replay(started: started, startedAt: first.recordedAt, records: records)
    }

    private func requireReader(_ state: CollaborationState, _ caller: Caller, auditorToo: Bool = true) throws {
        guard state.hasAccess(caller.account) || (auditorToo && caller.isAuditor) else {
            throw DomainError(.forbidden, "no_access", "the caller has no access to this collaboration")
        }
    }

    public func collaboration(_ id: String, caller: Caller) async throws -> CollaborationView {
        let folded = try await fold(id)
        try requireReader(folded.state, caller)
        let s = folded.started
        let identities = folded.state.identities.values
        return CollaborationView(
            collaborationId: s.collaborationId, localIdentifier: s.localIdentifier, title: s.title,
            initiatorHandle: s.initiatorHandle, initiatorName: s.initiatorName, owner: s.owner,
            universalLink: s.universalLink, shareOptions: s.shareOptions,
            selectedOptions: s.shareOptions?.selected ?? [:],
            memberCounts: MemberCounts(
                invited: identities.filter { $0.status == .invited }.count,
                granted: identities.filter { $0.status == .granted }.count,
                removed: identities.filter { $0.status == .removed }.count),
            startedAt: folded.startedAt, position: folded.position)
    }

    public func members(_ id: String, caller: Caller, atPosition: Int64? = nil, asOf: Date? = nil) async throws -> MembersView {
        let now = try await fold(id)
        try requireReader(now.state, caller)
        let folded = now.upTo(atPosition: atPosition, asOf: asOf)
        var invitedAt: [String: Date] = [:]
        var grantedAt: [String: Date] = [:]
        for (record, event) in folded.records {
            switch event {
            case .identityAdded(let e):
                invitedAt[e.rootHash.base64] = record.recordedAt
                grantedAt[e.rootHash.base64] = nil
            case .accessGranted(let e): grantedAt[e.rootHash.base64] = record.recordedAt
            default: break
            }
        }
        let members = folded.state.identities
            .filter { $0.value.status != .removed }
            .sorted { $0.key < $1.key }
            .map { key, identity in
                Member(
                    rootHash: key, state: identity.status.rawValue, accountId: identity.account,
                    invitedAt: invitedAt[key], grantedAt: identity.status == .granted ? grantedAt[key] : nil)
            }
        return MembersView(collaborationId: folded.started.collaborationId, owner: folded.state.owner, position: folded.position, members: members)
    }

    public func history(_ id: String, caller: Caller) async throws -> HistoryView {
        let folded = try await fold(id)
        guard caller.account == folded.state.owner || caller.isAuditor else {
            throw DomainError(.forbidden, "not_owner_or_auditor", "history is for the owner and auditors")
        }
        let entries = try folded.records.map { record, _ in
            let metadata = try? CanonicalJSON.decode(EventMetadata.self, from: record.metadata)
            return HistoryEntry(
                position: record.position, version: record.version, type: record.type, time: record.recordedAt,
                actor: metadata?.actor, data: try CanonicalJSON.decode(JSONValue.self, from: record.data))
        }
        return HistoryView(collaborationId: folded.started.collaborationId, events: entries)
    }

    /// Notices the caller may see: change and persistence notices for everyone with access,
    /// membership notices derived from grants and revocations, mentions only for the person
    /// mentioned (the account holding that identity).
    public func highlights(_ id: String, caller: Caller) async throws -> HighlightsView {
        let folded = try await fold(id)
        try requireReader(folded.state, caller, auditorToo: false)
        let myIdentity = folded.state.grants[caller.account]
        var notices: [Notice] = []
        for (record, event) in folded.records {
            switch event {
            case .highlightPosted(let h):
                if h.kind == .mention && h.mentionedRootHash?.base64 != myIdentity { continue }
                notices.append(Notice(
                    position: record.position, kind: h.kind.rawValue, trigger: h.trigger,
                    mentionedRootHash: h.mentionedRootHash?.base64, accountId: h.account, time: record.recordedAt))
            case .accessGranted(let g):
                notices.append(Notice(
                    position: record.position, kind: "membership", trigger: "addedCollaborator", mentionedRootHash: nil,
                    accountId: g.account, time: record.recordedAt))
            case .accessRevoked(let r):
                notices.append(Notice(
                    position: record.position, kind: "membership", trigger: "removedCollaborator", mentionedRootHash: nil,
                    accountId: r.account, time: record.recordedAt))
            default: break
            }
        }
        return HighlightsView(collaborationId: folded.started.collaborationId, highlights: notices)
    }

    public func myCollaborations(caller: Caller) async throws -> MyCollaborationsView {
        let rows = try await client.query(
            """
            SELECT stream_id, event_type, data::text FROM ledger_events
            WHERE event_type IN ('CollaborationStarted', 'AccessGranted', 'AccessRevoked')
              AND (data::jsonb ->> 'owner' = \(caller.account) OR data::jsonb ->> 'account' = \(caller.account))
            ORDER BY position
            """, logger: logger)
        var owned: [String] = []
        var access: [String: Int] = [:]
        var order: [String] = []
        for try await (stream, type, data) in rows.decode((String, String, String).self) {
            switch try CollaborationEvent(type: type, json: data) {
            case .started(let s): owned.append(s.collaborationId)
            case .accessGranted:
                if access[stream] == nil { order.append(stream) }
                access[stream, default: 0] += 1
            case .accessRevoked: access[stream, default: 0] -= 1
            default: break
            }
        }
        var result: [MyCollaboration] = []
        for id in owned {
            let folded = try await fold(id)
            result.append(MyCollaboration(collaborationId: id, title: folded.started.title, role: "owner"))
        }
        for stream in order where (access[stream] ?? 0) > 0 {
            let id = String(stream.dropFirst("collaboration-".count))
            if owned.contains(id) { continue }
            let folded = try await fold(id)
            if folded.state.grants[caller.account] != nil {
                result.append(MyCollaboration(collaborationId: id, title: folded.started.title, role: "member"))
            }
        }
        return MyCollaborationsView(accountId: caller.account, collaborations: result)
    }

    public func auditAccess(
        caller: Caller, account: String?, collaborationId: String?, from: Date?, to: Date?, limit: Int = 10_000
    ) async throws -> AccessAuditView {
        guard caller.isAuditor else { throw DomainError(.forbidden, "not_auditor", "the access audit is for auditors") }
        let stream = try collaborationId.map { Streams.collaboration(try Identifiers.collaborationId($0)) }
        let fromMicros = from.map { Int64($0.timeIntervalSince1970 * 1_000_000) }
        let toMicros = to.map { Int64($0.timeIntervalSince1970 * 1_000_000) }
        let rows = try await client.query(
            """
            SELECT position, stream_id, event_type, data::text, metadata::text,
                   (extract(epoch FROM recorded_at) * 1000000)::int8
            FROM ledger_events
            WHERE event_type IN ('AccessGranted', 'AccessRevoked')
              AND (\(account)::text IS NULL OR data::jsonb ->> 'account' = \(account))
              AND (\(stream)::text IS NULL OR stream_id = \(stream))
              AND (\(fromMicros)::int8 IS NULL OR recorded_at >= to_timestamp(\(fromMicros)::float8 / 1000000))
              AND (\(toMicros)::int8 IS NULL OR recorded_at <= to_timestamp(\(toMicros)::float8 / 1000000))
            ORDER BY position LIMIT \(limit)
            """, logger: logger)
        var records: [AccessRecord] = []
        for try await (position, streamId, type, data, metadata, micros) in rows.decode((Int64, String, String, String, String, Int64).self) {
            let actor = (try? CanonicalJSON.decode(EventMetadata.self, from: metadata))?.actor
            let time = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
            let collab = String(streamId.dropFirst("collaboration-".count))
            switch try CollaborationEvent(type: type, json: data) {
            case .accessGranted(let g):
                records.append(AccessRecord(
                    position: position, time: time, collaborationId: collab, accountId: g.account,
                    rootHash: g.rootHash.base64, change: "granted", reason: nil, actor: actor))
            case .accessRevoked(let r):
                records.append(AccessRecord(
                    position: position, time: time, collaborationId: collab, accountId: r.account,
                    rootHash: r.rootHash.base64, change: "revoked", reason: r.reason, actor: actor))
            default: break
            }
        }
        return AccessAuditView(records: records)
    }
}
