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

        public init?(_ stored: StreamState?) throws {
            guard let stored, let json = stored.state else { return nil }
            self.init(
                state: try CanonicalJSON.decode(CollaborationState.self, from: json), version: stored.version, position: stored.position)
        }

        package init(state: CollaborationState, version: Int64, position: Int64) {
            self.state = state
            self.version = version
            self.position = position
        }
    }

    /// The collaboration as of the log's latest append to it; 404 if there is none.
    public func current(_ collaborationId: String) async throws -> Current {
        guard let current = try Current(try await store.streamState(Streams.collaboration(collaborationId))) else {
            throw DomainError(.notFound, "not_found", "collaboration not found")
        }
        return current
    }

    /// `current` of several collaborations in one read, keyed by id; unknown ones are absent.
    public func current(_ collaborationIds: [String]) async throws -> [String: Current] {
        let states = try await store.streamStates(collaborationIds.map(Streams.collaboration))
        var currents: [String: Current] = [:]
        for id in collaborationIds where currents[id] == nil {
            currents[id] = try Current(states[Streams.collaboration(id)])
        }
        return currents
    }

    /// What a decision appends: events (none to append nothing), each with its metadata and
    /// optionally a fixed id, so a repeated decision meets the first one.
    public struct Decision: Sendable {
        public struct Entry: Sendable {
            public var event: CollaborationEvent
            public var metadata: EventMetadata
            public var id: UUID?

            public init(event: CollaborationEvent, metadata: EventMetadata, id: UUID? = nil) {
                self.event = event
                self.metadata = metadata
                self.id = id
            }
        }
        public var entries: [Entry]

        public init(entries: [Entry]) {
            self.entries = entries
        }

        public init(events: [CollaborationEvent], metadata: EventMetadata, eventId: UUID? = nil) {
            precondition(eventId == nil || events.count == 1, "a fixed event id names a single event")
            entries = events.map { Entry(event: $0, metadata: metadata, id: eventId) }
        }
    }

    public struct Outcome: Sendable {
        /// Nil when the decision appended nothing.
        public var result: AppendResult?
        /// The stream's last position after the command.
        public var position: Int64
        /// When `result.duplicate`: the events stored the first time, in place of the new decision's.
        public var stored: [RecordedEvent]
        /// The events decided (and appended, unless `result.duplicate`).
        public var events: [CollaborationEvent]
        /// The collaboration as the command left it (as read when it appended nothing); nil
        /// when its append met an earlier one (`result.duplicate`).
        public var current: Current?
    }

    /// Loads the inline state, decides, appends at the version read; a concurrent change makes
    /// it read and decide again. A repeated fixed event id returns what was stored first.
    public func decideAndAppend(
        _ collaborationId: String, _ decide: (CollaborationState) throws -> Decision
    ) async throws -> Outcome {
        try await withoutActuallyEscaping(decide) { decide in
            try await decideAndAppend([collaborationId: decide])[collaborationId]!.get()
        }
    }

    /// `decideAndAppend` of several collaborations at once: their states read in one query
    /// (or taken from `read`, read by the caller a moment ago), their appends in one group
    /// commit; those changed meanwhile are read and decided again. One result per collaboration.
    public func decideAndAppend(
        _ decisions: [String: (CollaborationState) throws -> Decision], read: [String: Current] = [:]
    ) async -> [String: Result<Outcome, any Error>] {
        var results: [String: Result<Outcome, any Error>] = [:]
        var currents = read
        var open = Array(decisions.keys)
        for attempt in 1...Self.attempts where !open.isEmpty {
            let unread = open.filter { currents[$0] == nil }
            if !unread.isEmpty {
                do {
                    currents.merge(try await current(unread)) { $1 }
                } catch {
                    for id in unread { results[id] = .failure(error) }
                }
            }
            var requests: [AppendRequest] = []
            var appending: [(id: String, events: [CollaborationEvent], state: CollaborationState)] = []
            for id in open where results[id] == nil {
                guard let current = currents[id] else {
                    results[id] = .failure(DomainError(.notFound, "not_found", "collaboration not found"))
                    continue
                }
                do {
                    let decision = try decisions[id]!(current.state)
                    guard !decision.entries.isEmpty else {
                        results[id] = .success(Outcome(result: nil, position: current.position, stored: [], events: [], current: current))
                        continue
                    }
                    var next = current.state
                    for entry in decision.entries { next.apply(entry.event) }
                    requests.append(
                        AppendRequest(
                            streamId: Streams.collaboration(id), expectedVersion: .exact(current.version),
                            events: decision.entries.map { $0.event.newEvent(metadata: $0.metadata, id: $0.id ?? Identifiers.timeOrderedUUID()) },
                            state: next.json))
                    appending.append((id, decision.entries.map(\.event), next))
                } catch {
                    results[id] = .failure(error)
                }
            }
            open = []
            for ((id, events, state), (request, appended)) in zip(appending, zip(requests, await store.appendAll(requests))) {
                switch appended {
                case .success(let result):
                    var stored: [RecordedEvent] = []
                    if result.duplicate {
                        do {
                            stored = try await store.readStream(request.streamId, afterVersion: result.version - Int64(events.count))
                                .filter { recorded in request.events.contains { $0.eventId == recorded.eventId } }
                        } catch {
                            results[id] = .failure(error)
                            continue
                        }
                    }
                    results[id] = .success(
                        Outcome(
                            result: result, position: result.lastPosition, stored: stored, events: events,
                            current: result.duplicate
                                ? nil : Current(state: state, version: result.version, position: result.lastPosition)))
                case .failure(let error as StoreError) where error.isVersionConflict && attempt < Self.attempts:
                    currents[id] = nil
                    open.append(id)
                case .failure(let error):
                    results[id] = .failure(error)
                }
            }
        }
        return results
    }
}
