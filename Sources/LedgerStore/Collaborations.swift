import Foundation
import LedgerDomain

/// Collaboration streams as command handlers use them: the current inline state, and the
/// decide → append-at-that-version → retry-on-conflict loop every command runs.
public struct Collaborations: Sendable {
    public let store: any EventStore
    static let attempts = 8

    public init(store: any EventStore) {
        self.store = store
    }

    public struct Current: Sendable {
        public var state: CollaborationState
        public var version: Int64
        /// Log position of the stream's last event.
        public var position: Int64
    }

    /// The collaboration as of the log's latest append to it; 404 if there is none.
    public func current(_ collaborationId: String) async throws -> Current {
        guard let stored = try await store.streamState(Streams.collaboration(collaborationId)), let json = stored.state else {
            throw DomainError(.notFound, "not_found", "collaboration not found")
        }
        return Current(
            state: try CanonicalJSON.decode(CollaborationState.self, from: json), version: stored.version, position: stored.position)
    }

    /// What a decision appends: events (none to append nothing), their metadata, and an
    /// optional fixed id for a single event so a repeated decision meets the first one.
    public struct Decision: Sendable {
        public var events: [CollaborationEvent]
        public var metadata: EventMetadata
        public var eventId: UUID?

        public init(events: [CollaborationEvent], metadata: EventMetadata, eventId: UUID? = nil) {
            precondition(eventId == nil || events.count == 1, "a fixed event id names a single event")
            self.events = events
            self.metadata = metadata
            self.eventId = eventId
        }
    }

    public struct Outcome: Sendable {
        /// Nil when the decision appended nothing.
        public var result: AppendResult?
        /// The stream's last position after the command.
        public var position: Int64
        /// When `result.duplicate`: the events stored the first time, in place of the new decision's.
        public var stored: [RecordedEvent]
    }

    /// Loads the inline state, decides, appends at the version read; a concurrent change makes
    /// it read and decide again. A repeated fixed event id returns what was stored first.
    public func decideAndAppend(
        _ collaborationId: String, _ decide: (CollaborationState) throws -> Decision
    ) async throws -> Outcome {
        let stream = Streams.collaboration(collaborationId)
        for attempt in 1...Self.attempts {
            let current = try await current(collaborationId)
            let decision = try decide(current.state)
            if decision.events.isEmpty { return Outcome(result: nil, position: current.position, stored: []) }
            var next = current.state
            for event in decision.events { next.apply(event) }
            let events = decision.events.map { event in
                decision.eventId.map { event.newEvent(metadata: decision.metadata, id: $0) } ?? event.newEvent(metadata: decision.metadata)
            }
            do {
                let result = try await store.append(.init(
                    streamId: stream, expectedVersion: .exact(current.version), events: events, state: next.json))
                var stored: [RecordedEvent] = []
                if result.duplicate {
                    stored = try await store.readStream(stream, afterVersion: result.version - Int64(events.count))
                        .filter { recorded in events.contains { $0.eventId == recorded.eventId } }
                }
                return Outcome(result: result, position: result.lastPosition, stored: stored)
            } catch let error as StoreError where error.isVersionConflict && attempt < Self.attempts {
                continue
            }
        }
        throw StoreError.versionConflict(stream: stream, expected: .any, actual: -1)
    }
}
