import TransparencyLog

/// An index revision as the log records it (docs/TRUST.md, "The verifiable index"): the index
/// root over the log's positions 1 … `logSize`, the data of an event `IndexRevisionRecorded` of
/// the stream `ledger-index`. Such an event yields no key (`IndexMap`): recording a revision
/// changes no index.
public struct IndexRevision: Hashable, Sendable {
    public static let stream = "ledger-index"
    public static let type = "IndexRevisionRecorded"

    public struct Refused: Error, Hashable, CustomStringConvertible {
        public var description: String
    }

    /// The positions the index covers: 1 … logSize (0: none).
    public let logSize: Int64
    public let root: Hash256

    /// Refused for a negative size.
    public init(logSize: Int64, root: Hash256) throws(Refused) {
        guard logSize >= 0 else { throw Refused(description: "a log size of \(logSize)") }
        (self.logSize, self.root) = (logSize, root)
    }

    /// The event's data, exactly: `{"logSize":N,"root":"B"}`, N in decimal without sign or
    /// leading zeros, B the root in standard padded base64, no whitespace.
    public var data: String { #"{"logSize":\#(logSize),"root":"\#(root.base64)"}"# }

    /// The revision an event records; refused unless it is an `IndexRevisionRecorded` of
    /// `ledger-index` whose data is exactly what `data` writes for it.
    public init(streamId: String, type: String, data: String) throws(Refused) {
        guard streamId.utf8.elementsEqual(Self.stream.utf8), type.utf8.elementsEqual(Self.type.utf8) else {
            throw Refused(description: "a \(type) of \(streamId), not an \(Self.type) of \(Self.stream)")
        }
        let head = #"{"logSize":"#.utf8
        let middle = #","root":""#.utf8
        let utf8 = Array(data.utf8)
        guard utf8.starts(with: head), let comma = utf8.firstIndex(of: UInt8(ascii: ",")), utf8.count == comma + middle.count + 44 + 2,
            utf8[comma...].starts(with: middle),
            let size = Int64(String(decoding: utf8[head.count..<comma], as: UTF8.self)),
            let bytes = Base64.decode(String(decoding: utf8[(comma + middle.count)...].dropLast(2), as: UTF8.self)),
            let root = Hash256(bytes)
        else { throw Refused(description: "the data is not a revision's: \(data.prefix(120))") }
        try self.init(logSize: size, root: root)
        guard self.data.utf8.elementsEqual(utf8) else {
            throw Refused(description: "the data is not written as a revision's: \(data.prefix(120))")
        }
    }
}
