import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerWire
import PostgresNIO

/// Collaboration streams as the commands (`CollaborationCommands`) use them: the current inline
/// state, and the decide (`CollaborationDecisions`, pure) → append-at-that-version →
/// retry-on-conflict loop every command runs.
public struct CollaborationStreams: Sendable {
    public let store: EventStore
    static let attempts = 8

    public init(store: EventStore) {
        self.store = store
    }

    public struct Current: Sendable {
        public var state: CollaborationState
        public var version: Int64
        /// Log position of the stream's last event.
        public var position: Int64
        /// The stream row's next window end, read with the state (`currents` only).
        public var nextDueAt: Date?

        public init(state: CollaborationState, version: Int64, position: Int64) {
            (self.state, self.version, self.position) = (state, version, position)
        }

        public init?(_ stored: StreamState?) throws {
            guard let stored, let json = stored.state else { return nil }
            state = try CollaborationStateJSON.decode(json)
            version = stored.version
            position = stored.position
        }
    }

    /// The collaboration as of the log's latest append to it; 404 if there is none.
    public func current(_ collaborationId: String) async throws -> Current {
        guard let current = try Current(try await store.streamState(Streams.collaboration(collaborationId))) else {
            throw DomainError.collaborationNotFound
        }
        return current
    }

    /// The collaborations among `ids` as of the log's latest append to each, with each row's next
    /// window end, in one statement; those without a stream, or whose state does not decode, are
    /// absent (one such state must not stop the others' reads). A state in `decoded` at the
    /// row's version is not sent again nor decoded: the row's version names its state.
    public func currents(_ ids: [String], decoded: [String: Current] = [:]) async throws -> [String: Current] {
        let wanted = Set(ids)
        let known = decoded.filter { wanted.contains($0.key) }
        return try await store.client.queryUnlessClosed(
            """
            SELECT s.stream_id, s.version, CASE WHEN k.version IS DISTINCT FROM s.version THEN s.state::text END, s.position,
                   (extract(epoch FROM s.next_due_at) * 1000000)::int8
            FROM ledger_streams s
            LEFT JOIN unnest(\(known.keys.map(Streams.collaboration))::text[], \(known.values.map(\.version))::int8[]) AS k(stream, version)
                ON k.stream = s.stream_id
            WHERE s.stream_id = ANY(\(ids.map(Streams.collaboration)))
            """,
            logger: store.logger
        ) { rows in
            var currents: [String: Current] = [:]
            for try await (stream, version, state, position, due) in rows.decode((String, Int64, String?, Int64, Int64?).self) {
                guard let id = Streams.collaborationId(of: stream) else { continue }
                var current: Current
                if state == nil, let memo = known[id], memo.version == version {
                    current = memo
                    current.position = position
                } else {
                    guard let read = try? Current(StreamState(version: version, state: state, position: position)) else { continue }
                    current = read
                }
                current.nextDueAt = due.map { RecordedTime.date(micros: $0) }
                currents[id] = current
            }
            return currents
        }
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
    }

    /// A command's one read before it decides, in one statement: the collaboration, the
    /// pseudonym of `account` (made on its first use; nil: no actor) and the database's clock,
    /// which the command decides on (SPEC "One clock": windows are decided on the clock that
    /// dates the events, never the host's).
    public func current(_ collaborationId: String, subjectOf account: String?) async throws -> (Current, subject: String?, now: Date) {
        let read = try await store.reads.read(.init(stream: Streams.collaboration(collaborationId), account: account))
        guard let current = try Current(read.stream) else { throw DomainError.collaborationNotFound }
        return (current, read.subject, read.now)
    }

    /// Loads the inline state, decides, appends at the version read; a concurrent change makes
    /// it read and decide again. A repeated fixed event id returns what was stored first.
    public func decideAndAppend(
        _ collaborationId: String, _ decide: (CollaborationState) throws -> Decision
    ) async throws -> Outcome {
        try await loop(collaborationId, actor: nil) { state, _, _ in try decide(state) }
    }

    /// The same, for a command by `account`: `decide` gets its pseudonym and the database's
    /// clock (`now`), read with the state.
    public func decideAndAppend(
        _ collaborationId: String, actor account: String,
        _ decide: (CollaborationState, _ subject: String, _ now: Date) throws -> Decision
    ) async throws -> Outcome {
        try await loop(collaborationId, actor: account) { state, subject, now in try decide(state, subject!, now) }
    }

    private func loop(
        _ collaborationId: String, actor account: String?, _ decide: (CollaborationState, String?, Date) throws -> Decision
    ) async throws -> Outcome {
        for attempt in 1...Self.attempts {
            let (current, subject, now) = try await self.current(collaborationId, subjectOf: account)
            // A command decides on the collaboration as it stands now: windows that have ended are
            // expired first (the expiry service's events, with the same derived ids), so no
            // access lingers between a window's end and the service's append.
            let (due, state) = CollaborationDecisions.expired(state: current.state, now: now)
            let decision = try decide(state, subject, now)
            guard !decision.entries.isEmpty else { return Outcome(result: nil, position: current.position, stored: [], events: []) }
            let entries = due.map { Decision.Entry(event: $0.event, metadata: EventMetadata(), id: $0.id) } + decision.entries
            var next = state
            for entry in decision.entries { next.apply(entry.event) }
            let request = AppendRequest(
                streamId: Streams.collaboration(collaborationId), expectedVersion: .exact(current.version),
                events: entries.map { $0.event.newEvent(metadata: $0.metadata, id: $0.id ?? Identifiers.timeOrderedUUID()) },
                state: next.json)
            let result: AppendResult
            do {
                result = try await store.append(request)
            } catch let error as StoreError where error.isVersionConflict && attempt < Self.attempts {
                continue
            }
            var stored: [RecordedEvent] = []
            if result.duplicate {
                stored = try await store.readStream(request.streamId, afterVersion: result.version - Int64(request.events.count))
                    .filter { recorded in request.events.contains { $0.eventId == recorded.eventId } }
            }
            return Outcome(result: result, position: result.lastPosition, stored: stored, events: decision.entries.map(\.event))
        }
        preconditionFailure("the last attempt returns or throws")
    }
}
