import Foundation
import LedgerDomain
import NIOCore

/// One append: events for a stream at an expected version, with the stream's new inline state.
public struct AppendRequest: Sendable, Hashable {
    public var streamId: String
    public var expectedVersion: ExpectedVersion
    public var events: [NewEvent]
    /// The stream's inline state after these events (nil keeps the stored one). It is written
    /// in the same transaction as the events, so it never disagrees with the log.
    public var state: String?
    /// Personal values the events commit to, kept with them in the same transaction (SPEC
    /// "Personal data and erasure"), if the append succeeds and their subject still exists.
    public var values: KeptValues?

    public init(streamId: String, expectedVersion: ExpectedVersion, events: [NewEvent], state: String? = nil, values: KeptValues? = nil) {
        self.streamId = streamId
        self.expectedVersion = expectedVersion
        self.events = events
        self.state = state
        self.values = values
    }
}

/// Committed values and the subject they belong to.
public struct KeptValues: Sendable, Hashable {
    public var subject: String
    public var commitments: [PersonalData.Commitment]

    public init(subject: String, commitments: [PersonalData.Commitment]) {
        self.subject = subject
        self.commitments = commitments
    }

    /// The values of a group's requests as `ledger_keep_values`'s columns (Migrations/sql/0017):
    /// each value with its request's 1-based index.
    struct Columns {
        var requests: [Int32] = [], commitments: [String] = [], subjects: [String] = [], kinds: [String] = []
        var values: [String] = [], openings: [ByteBuffer] = []

        init(_ appends: [AppendRequest]) {
            for (index, append) in appends.enumerated() {
                guard let kept = append.values else { continue }
                for c in kept.commitments {
                    requests.append(Int32(index + 1))
                    commitments.append(c.text)
                    subjects.append(kept.subject)
                    kinds.append(c.kind.rawValue)
                    values.append(c.value)
                    openings.append(ByteBuffer(bytes: c.opening))
                }
            }
        }
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
