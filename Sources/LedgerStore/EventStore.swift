import Foundation
import LedgerDomain

/// Appends to and reads from the event log.
public protocol EventStore: Sendable {
    /// Appends events to one stream if it is at the expected version. A retry carrying the
    /// same event ids returns the first append's result instead of storing them twice.
    func append(_ request: AppendRequest) async throws -> AppendResult
    /// `append` of several requests, each checked on its own; one result per request, in order.
    /// A store that commits in groups writes them in one group.
    func appendAll(_ requests: [AppendRequest]) async -> [Result<AppendResult, any Error>]
    /// Events of one stream in version order, starting after `afterVersion`.
    func readStream(_ streamId: String, afterVersion: Int64) async throws -> [RecordedEvent]
    /// Up to `limit` events of the whole log after `position`, in position order, never skipping one.
    func readAll(after position: Int64, limit: Int) async throws -> [RecordedEvent]
    /// The last position and its hash (position 0 and the genesis hash for an empty log).
    func head() async throws -> LogHead
    /// The stream's version and the writer's inline state snapshot, nil for an unknown stream.
    func streamState(_ streamId: String) async throws -> StreamState?
}

extension EventStore {
    public func appendAll(_ requests: [AppendRequest]) async -> [Result<AppendResult, any Error>] {
        var results: [Result<AppendResult, any Error>] = []
        for request in requests {
            do { results.append(.success(try await append(request))) } catch { results.append(.failure(error)) }
        }
        return results
    }
}

/// One append: events for a stream at an expected version, with the stream's new inline state.
public struct AppendRequest: Sendable, Hashable {
    public var streamId: String
    public var expectedVersion: ExpectedVersion
    public var events: [NewEvent]
    /// The stream's inline state after these events (nil keeps the stored one). It is written
    /// in the same transaction as the events, so it never disagrees with the log.
    public var state: String?

    public init(streamId: String, expectedVersion: ExpectedVersion, events: [NewEvent], state: String? = nil) {
        self.streamId = streamId
        self.expectedVersion = expectedVersion
        self.events = events
        self.state = state
    }
}

public struct AppendResult: Sendable, Hashable {
    public var streamId: String
    /// Position of the first and last appended event.
    public var firstPosition: Int64
    public var lastPosition: Int64
    /// Stream version after the append.
    public var version: Int64
    /// True when these event ids were already stored: nothing new was written.
    public var duplicate: Bool

    public init(streamId: String, firstPosition: Int64, lastPosition: Int64, version: Int64, duplicate: Bool) {
        self.streamId = streamId
        self.firstPosition = firstPosition
        self.lastPosition = lastPosition
        self.version = version
        self.duplicate = duplicate
    }
}

public struct LogHead: Sendable, Hashable {
    public var position: Int64
    public var hash: [UInt8]

    public init(position: Int64, hash: [UInt8]) {
        self.position = position
        self.hash = hash
    }
}

public struct StreamState: Sendable, Hashable {
    public var version: Int64
    public var state: String?
    /// Log position of the stream's last event.
    public var position: Int64

    public init(version: Int64, state: String?, position: Int64) {
        self.version = version
        self.state = state
        self.position = position
    }
}

/// Errors of the event store: a struct around a private enum so cases can grow.
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    enum Kind: Sendable, Equatable {
        case versionConflict(stream: String, expected: ExpectedVersion, actual: Int64)
        case idempotencyMismatch(eventId: UUID)
        case invalidRequest(String)
    }
    let kind: Kind

    public static func versionConflict(stream: String, expected: ExpectedVersion, actual: Int64) -> StoreError {
        StoreError(kind: .versionConflict(stream: stream, expected: expected, actual: actual))
    }
    public static func idempotencyMismatch(eventId: UUID) -> StoreError {
        StoreError(kind: .idempotencyMismatch(eventId: eventId))
    }
    public static func invalidRequest(_ message: String) -> StoreError {
        StoreError(kind: .invalidRequest(message))
    }

    public var isVersionConflict: Bool {
        if case .versionConflict = kind { return true }
        return false
    }

    /// The stream version found by a conflicting append.
    public var actualVersion: Int64? {
        if case .versionConflict(_, _, let actual) = kind { return actual }
        return nil
    }

    public var isIdempotencyMismatch: Bool {
        if case .idempotencyMismatch = kind { return true }
        return false
    }

    public var description: String {
        switch kind {
        case .versionConflict(let stream, let expected, let actual):
            "version conflict on stream \(stream): expected \(expected), found version \(actual)"
        case .idempotencyMismatch(let id):
            "event id \(id) was already stored as part of a different append"
        case .invalidRequest(let message):
            "invalid append: \(message)"
        }
    }
}
