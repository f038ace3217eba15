/// The log's last position and its hash (position 0 and the genesis hash for an empty log).
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
