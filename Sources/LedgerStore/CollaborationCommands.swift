import Foundation
import LedgerDomain
import LedgerWire

/// The commands on collaborations. Each decides on the inline state the store keeps in the same
/// transaction as the stream (never on a lagging view) and appends with the version it read; a
/// concurrent change makes it read and decide again.
public struct CollaborationCommands: Sendable {
    let store: EventStore
    let collaborations: CollaborationStreams
    let subjects: Subjects
    /// Where universal links point.
    let publicBaseURL: String
    /// Whether a collaboration id belongs on this store: always, but on one of several shards,
    /// only the ids the shard map places here (a start picks its id until one is).
    let holds: @Sendable (String) -> Bool

    public init(store: EventStore, publicBaseURL: String, holds: @escaping @Sendable (String) -> Bool = { _ in true }) {
        self.store = store
        self.collaborations = CollaborationStreams(store: store)
        self.subjects = Subjects(store: store)
        self.publicBaseURL = publicBaseURL.hasSuffix("/") ? String(publicBaseURL.dropLast()) : publicBaseURL
        self.holds = holds
    }

    // MARK: Commands

    /// Starts a collaboration owned by the caller: the owner as the caller's pseudonym, the title,
    /// handle, name, local identifier and share options' texts as commitments whose plaintexts and
    /// openings are kept with the event. With an idempotency key, the collaboration id and event id
    /// derive from (pseudonym, key), so a retry meets its first append; the metadata keeps only the
    /// key's SHA-256 (`PersonalData.clientTextDigest`). `requestId` is the request's id as the logs
    /// show it (RequestIdMiddleware: already a digest when the client chose it), for every command.
    public func start(_ command: StartCollaboration, caller: Caller, idempotencyKey: String?, requestId: String) async throws
        -> StartResponse
    {
        try command.validate()
        if let key = idempotencyKey, key.isEmpty || key.count > 255 {
            throw DomainError.invalid("Idempotency-Key must be 1 to 255 characters", code: .invalidIdempotencyKey)
        }
        let (subject, key) = (try await subjects.pseudonym(for: caller.account), idempotencyKey)
        let eventId = try startId(subject: subject, idempotencyKey: key)
        let id = eventId.uuidString.lowercased()
        let link = "\(publicBaseURL)/collaborations/\(id)"
        let commitments = command.commitments()
        let started = command.started(collaborationId: id, owner: subject, universalLink: link, commitments: commitments)
        guard case .started(let payload) = started else { preconditionFailure() }
        let metadata = EventMetadata(actor: subject, correlationId: key.map(PersonalData.clientTextDigest), requestId: requestId)
        let stream = Streams.collaboration(id)
        do {
            let result = try await store.append(
                .init(
                    streamId: stream, expectedVersion: .noStream, events: [started.newEvent(metadata: metadata, id: eventId)],
                    state: CollaborationState(started: payload).json, values: KeptValues(subject: subject, commitments: commitments)))
            guard result.duplicate else { return StartResponse(collaborationId: id, universalLink: link, position: result.firstPosition) }
            // A retry: answer as the first time, if it really is the same request (its values
            // were kept with the first; these were not).
            let first = try await store.readStream(stream, afterVersion: 0).first
            guard let first, case .started(let stored) = try CollaborationEvent(first),
                command.isRepeated(by: stored, disclosure: try await subjects.disclosure(for: [first]))
            else {
                throw DomainError(.idempotencyKeyReused, "this Idempotency-Key was used for a different request")
            }
            return StartResponse(collaborationId: id, universalLink: stored.universalLink, position: result.firstPosition)
        } catch let error as StoreError where error.isVersionConflict || error.isIdempotencyMismatch {
            throw DomainError(.idempotencyKeyReused, "this Idempotency-Key was used for a different request")
        }
    }

    /// A start's event id, which is its collaboration's id: derived from (pseudonym, key) with an
    /// idempotency key, so a retry meets its first append, else random. On a shard, the first of a
    /// sequence of such ids that the shard holds (`holds`); the sequence is the same on every
    /// retry, and its first id is the one a single store always takes. A shard that holds 1 of its
    /// map's `2^k` partitions finds one in about `2^k` tries.
    func startId(subject: String, idempotencyKey key: String?) throws -> UUID {
        for attempt in 0..<Self.startIdAttempts {
            // The attempt comes before the pseudonym, which is never a bare number, so no
            // (pseudonym, key) of one attempt spells another's.
            let id =
                key.map {
                    Identifiers.derivedUUID(
                        attempt == 0 ? "start\u{0}\(subject)\u{0}\($0)" : "start\u{0}\(attempt)\u{0}\(subject)\u{0}\($0)")
                } ?? UUID()
            if holds(id.uuidString.lowercased()) { return id }
        }
        throw DomainError(.internalError, "no collaboration id this shard holds was found in \(Self.startIdAttempts) tries")
    }

    static let startIdAttempts = 1 << 16

    /// Adds identities (each with its window, or nil for the start's `defaultAccess`), removes
    /// identities and sets windows anew, in one decision at the database's time of the read
    /// (`now`, which dates a default window's start). Owner only.
    public func updateParticipants(
        collaborationId: String, added: [(RootHash, AccessWindow?)], removed: [RootHash], windows: [(RootHash, AccessWindow)] = [],
        caller: Caller, requestId: String
    ) async throws -> ParticipantsResponse {
        var decision: ParticipantsDecision?
        let id = try Identifiers.collaborationId(collaborationId)
        let outcome = try await collaborations.decideAndAppend(id, actor: caller.account) { state, subject, now in
            decision = try CollaborationDecisions.updateParticipants(
                state: state, actor: subject, added: added, removed: removed, windows: windows, now: now)
            return .init(events: decision!.events, metadata: EventMetadata(actor: subject, requestId: requestId))
        }
        // The revoked accounts as the caller knows them (the state names their pseudonyms).
        let revoked = decision!.revokedAccounts
        let shown = try await subjects.disclosure(pseudonyms: Set(revoked), commitments: [])
        return ParticipantsResponse(
            added: decision!.added.map(\.base64), removed: decision!.removed.map(\.base64),
            revokedAccounts: revoked.map(shown.account), windowsChanged: decision!.windowsChanged.map(\.base64),
            position: outcome.position)
    }

    public func postHighlight(
        collaborationId: String, kind: HighlightKind, trigger: String?, mentioned: RootHash?, caller: Caller, requestId: String
    ) async throws -> PositionResponse {
        let id = try Identifiers.collaborationId(collaborationId)
        let outcome = try await collaborations.decideAndAppend(id, actor: caller.account) { state, subject, now in
            let event = try CollaborationDecisions.postHighlight(
                state: state, actor: subject, kind: kind, trigger: trigger, mentioned: mentioned, now: now)
            return .init(events: [event], metadata: EventMetadata(actor: subject, requestId: requestId))
        }
        return PositionResponse(position: outcome.position)
    }
}
