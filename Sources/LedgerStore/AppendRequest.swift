import Foundation
import LedgerDomain

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
