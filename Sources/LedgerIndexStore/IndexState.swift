import LedgerIndex

/// What the stored index covers, as one commit left it: the log's positions 1 … `logSize`, and
/// the root their index has (`LogIndex`). The nodes and this state are written in one
/// transaction, so a reader that reads both in one snapshot (`IndexReader`) finds the root the
/// nodes make.
public struct IndexState: Hashable, Sendable, CustomStringConvertible {
    public var logSize: Int64
    public var root: Hash256

    public init(logSize: Int64, root: Hash256) {
        self.logSize = logSize
        self.root = root
    }

    /// The empty index: nothing covered, a root of 32 zero bytes.
    public static let empty = IndexState(logSize: 0, root: .zero)

    public var description: String { "\(logSize) events, root \(root.base64)" }
}
