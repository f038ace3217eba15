import Foundation
import LedgerDomain
import LedgerWire

/// The commands on collaborations. Each decides on the inline state the store keeps in the same
/// transaction as the stream (never on a lagging view) and appends with the version it read; a
/// concurrent change makes it read and decide again.
public struct CollaborationService: Sendable {
    let store: EventStore
    let collaborations: Collaborations
    /// Where universal links point.
    let publicBaseURL: String

    public init(store: EventStore, publicBaseURL: String) {
        self.store = store
        self.collaborations = Collaborations(store: store)
        self.publicBaseURL = publicBaseURL.hasSuffix("/") ? String(publicBaseURL.dropLast()) : publicBaseURL
    }

    // MARK: Commands

    /// Starts a collaboration owned by the caller. With an idempotency key, the collaboration
    /// id and event id derive from (account, key), so a retry meets its first append.
    public func start(_ command: StartCollaboration, caller: Caller, idempotencyKey: String?, requestId: String) async throws -> StartResponse {
        try command.validate()
        let eventId: UUID
        if let key = idempotencyKey {
            guard !key.isEmpty, key.count <= 255 else {
                throw DomainError.invalid("Idempotency-Key must be 1 to 255 characters", code: .invalidIdempotencyKey)
            }
            eventId = Identifiers.derivedUUID("start\u{0}\(caller.account)\u{0}\(key)")
        } else {
            eventId = UUID()
        }
        let id = eventId.uuidString.lowercased()
        let link = "\(publicBaseURL)/collaborations/\(id)"
        let started = command.started(collaborationId: id, owner: caller.account, universalLink: link)
        guard case .started(let payload) = started else { preconditionFailure() }
        let state = CollaborationState(started: payload)
        let metadata = EventMetadata(actor: caller.account, correlationId: idempotencyKey, requestId: requestId)
        let stream = Streams.collaboration(id)
        do {
            let result = try await store.append(.init(
                streamId: stream, expectedVersion: .noStream, events: [started.newEvent(metadata: metadata, id: eventId)],
                state: state.json))
            if result.duplicate {
                // A retry: answer as the first time, if it really is the same request.
                let first = try await store.readStream(stream, afterVersion: 0).first
                guard let first, case .started(let stored) = try CollaborationEvent(first),
                    stored.localIdentifier == command.localIdentifier, stored.title == command.title,
                    stored.initiatorHandle == command.initiatorHandle, stored.initiatorName == command.initiatorName,
                    stored.shareOptions == command.shareOptions
                else {
                    throw DomainError(.idempotencyKeyReused, "this Idempotency-Key was used for a different request")
                }
                return StartResponse(collaborationId: id, universalLink: stored.universalLink, position: result.firstPosition)
            }
            return StartResponse(collaborationId: id, universalLink: link, position: result.firstPosition)
        } catch let error as StoreError where error.isVersionConflict || error.isIdempotencyMismatch {
            throw DomainError(.idempotencyKeyReused, "this Idempotency-Key was used for a different request")
        }
    }

    public func updateParticipants(
        collaborationId: String, added: [RootHash], removed: [RootHash], caller: Caller, requestId: String
    ) async throws -> ParticipantsResponse {
        var decision: ParticipantsDecision?
        let id = try Identifiers.collaborationId(collaborationId)
        let outcome = try await collaborations.decideAndAppend(id) { state in
            decision = try CollaborationDecisions.updateParticipants(
                state: state, actor: caller.account, added: added, removed: removed)
            return .init(events: decision!.events, metadata: EventMetadata(actor: caller.account, requestId: requestId))
        }
        return ParticipantsResponse(
            added: decision!.added.map(\.base64), removed: decision!.removed.map(\.base64),
            revokedAccounts: decision!.revokedAccounts, position: outcome.position)
    }

    public func postHighlight(
        collaborationId: String, kind: HighlightKind, trigger: String?, mentioned: RootHash?, caller: Caller, requestId: String
    ) async throws -> PositionResponse {
        let id = try Identifiers.collaborationId(collaborationId)
        let outcome = try await collaborations.decideAndAppend(id) { state in
            let event = try CollaborationDecisions.postHighlight(
                state: state, actor: caller.account, kind: kind, trigger: trigger, mentioned: mentioned)
            return .init(events: [event], metadata: EventMetadata(actor: caller.account, requestId: requestId))
        }
        return PositionResponse(position: outcome.position)
    }
}
