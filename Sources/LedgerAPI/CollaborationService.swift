import Crypto
import Foundation
import LedgerDomain
import LedgerStore
import Logging
import PostgresNIO

/// Commands and reads of collaborations. Commands decide on the inline state the store keeps
/// in the same transaction as the stream (never on a lagging view) and append with the
/// version they read; a concurrent change makes them re-read and decide again.
public struct CollaborationService: Sendable {
    let store: any EventStore
    let client: PostgresClient
    let publicBaseURL: String
    let logger: Logger

    public init(store: any EventStore, client: PostgresClient, publicBaseURL: String, logger: Logger) {
        self.store = store
        self.client = client
        self.publicBaseURL = publicBaseURL.hasSuffix("/") ? String(publicBaseURL.dropLast()) : publicBaseURL
        self.logger = logger
    }

    // MARK: Commands

    /// Starts a collaboration owned by the caller. With an idempotency key, the collaboration
    /// id and event id derive from (account, key), so a retry meets its first append.
    public func start(_ command: StartCollaboration, caller: Caller, idempotencyKey: String?, requestId: String) async throws -> StartResponse {
        try command.validate()
        let eventId: UUID
        if let key = idempotencyKey {
            guard !key.isEmpty, key.count <= 255 else {
                throw DomainError.invalid("Idempotency-Key must be 1 to 255 characters", code: "invalid_idempotency_key")
            }
            eventId = Self.derivedUUID("start\u{0}\(caller.account)\u{0}\(key)")
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
                    throw DomainError(.unprocessable, "idempotency_key_reused", "this Idempotency-Key was used for a different request")
                }
                return StartResponse(collaborationId: id, universalLink: stored.universalLink, position: result.firstPosition)
            }
            return StartResponse(collaborationId: id, universalLink: link, position: result.firstPosition)
        } catch let error as StoreError where error.isVersionConflict || error.isIdempotencyMismatch {
            throw DomainError(.unprocessable, "idempotency_key_reused", "this Idempotency-Key was used for a different request")
        }
    }

    public func updateParticipants(
        collaborationId: String, added: [RootHash], removed: [RootHash], caller: Caller, requestId: String
    ) async throws -> ParticipantsResponse {
        try await decideAndAppend(collaborationId) { state in
            let decision = try CollaborationDecisions.updateParticipants(
                state: state, actor: caller.account, added: added, removed: removed)
            return (decision.events, EventMetadata(actor: caller.account, requestId: requestId), { position in
                ParticipantsResponse(
                    added: decision.added.map(\.base64), removed: decision.removed.map(\.base64),
                    revokedAccounts: decision.revokedAccounts, position: position)
            })
        }
    }

    public func postHighlight(
        collaborationId: String, kind: HighlightKind, trigger: String?, mentioned: RootHash?, caller: Caller, requestId: String
    ) async throws -> PositionResponse {
        try await decideAndAppend(collaborationId) { state in
            let event = try CollaborationDecisions.postHighlight(
                state: state, actor: caller.account, kind: kind, trigger: trigger, mentioned: mentioned)
            return ([event], EventMetadata(actor: caller.account, requestId: requestId), { PositionResponse(position: $0) })
        }
    }

    /// Loads the inline state, decides, appends at that version; retries on a concurrent change.
    func decideAndAppend<R>(
        _ collaborationId: String,
        _ decide: (CollaborationState) throws -> ([CollaborationEvent], EventMetadata, (Int64) -> R)
    ) async throws -> R {
        let stream = Streams.collaboration(try Self.validId(collaborationId))
        for attempt in 1...8 {
            let (state, version, position) = try await currentState(stream)
            let (events, metadata, respond) = try decide(state)
            if events.isEmpty { return respond(position) }
            var next = state
            for event in events { next.apply(event) }
            do {
                let result = try await store.append(.init(
                    streamId: stream, expectedVersion: .exact(version),
                    events: events.map { $0.newEvent(metadata: metadata) }, state: next.json))
                return respond(result.lastPosition)
            } catch let error as StoreError where error.isVersionConflict && attempt < 8 {
                continue
            }
        }
        throw StoreError.versionConflict(stream: stream, expected: .any, actual: -1)
    }

    /// The collaboration's state as of the log's latest append to it.
    public func currentState(_ stream: String) async throws -> (CollaborationState, Int64, Int64) {
        guard let stored = try await store.streamState(stream), let json = stored.state else {
            throw DomainError(.notFound, "not_found", "collaboration not found")
        }
        return (try CanonicalJSON.decode(CollaborationState.self, from: json), stored.version, stored.position)
    }

    /// A collaboration id is the lowercase UUID the ledger handed out.
    static func validId(_ id: String) throws -> String {
        guard let uuid = UUID(uuidString: id), uuid.uuidString.lowercased() == id.lowercased() else {
            throw DomainError(.notFound, "not_found", "collaboration not found")
        }
        return id.lowercased()
    }

    static func derivedUUID(_ text: String) -> UUID {
        var bytes = Array(SHA256.hash(data: Data(text.utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50  // name-based
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 4122 variant
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// Waits (bounded) until the log has reached `position`, so a read sees the caller's write.
    public func waitFor(position: Int64?, timeout: Duration = .seconds(2)) async throws {
        guard let position, position > 0 else { return }
        let deadline = ContinuousClock.now + timeout
        while try await store.head().position < position {
            guard ContinuousClock.now < deadline else { return }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
