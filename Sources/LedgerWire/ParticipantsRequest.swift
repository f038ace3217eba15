import Foundation

/// `POST /v1/collaborations/{id}/participants`: root hashes, base64; each added identity with
/// an optional access window, and windows set anew on current identities (SPEC "Time-bound
/// access"). Window bounds are RFC 3339 times (with or without fractional seconds, `Z` or an
/// offset), kept to the microsecond; this type writes them with six fractional digits, whatever
/// the encoder's date strategy.
public struct ParticipantsRequest: Codable, Sendable, Hashable {
    /// An entry of `added`: on the wire a plain root hash (`"…base64…"`), or an object
    /// `{rootHash, notBefore?, notAfter?}` for an identity added with a window. Without a bound
    /// (a string, or an object with neither) the identity gets the start's `defaultAccess`, if any;
    /// it is written as a plain string then.
    public struct Added: Codable, Sendable, Hashable, ExpressibleByStringLiteral {
        public var rootHash: String
        /// From when the identity may prove access (inclusive); nil: from now.
        public var notBefore: Date? { didSet { exact.notBefore = nil } }
        /// Until when (exclusive); nil: no end.
        public var notAfter: Date? { didSet { exact.notAfter = nil } }
        private var exact = ExactBounds()

        public init(rootHash: String, notBefore: Date? = nil, notAfter: Date? = nil) {
            self.rootHash = rootHash
            self.notBefore = notBefore
            self.notAfter = notAfter
        }

        /// The bounds to the microsecond: as the request wrote them when decoded (`ExactBounds`).
        public var notBeforeMicros: Int64? { exact.notBefore ?? notBefore.map(RFC3339.micros) }
        public var notAfterMicros: Int64? { exact.notAfter ?? notAfter.map(RFC3339.micros) }

        public init(stringLiteral rootHash: String) { self.init(rootHash: rootHash) }

        /// Whether the entry names a window (either bound).
        public var hasWindow: Bool { notBefore != nil || notAfter != nil }

        /// A string, or an object read as a `Window` is.
        public init(from decoder: any Decoder) throws {
            if let single = try? decoder.singleValueContainer(), let text = try? single.decode(String.self) {
                self.init(rootHash: text)
                return
            }
            let window = try Window(from: decoder)
            self.init(rootHash: window.rootHash, notBefore: window.notBefore, notAfter: window.notAfter)
            exact = window.exact
        }

        public func encode(to encoder: any Encoder) throws {
            guard hasWindow else {
                var single = encoder.singleValueContainer()
                try single.encode(rootHash)
                return
            }
            try Window(rootHash: rootHash, notBefore: notBefore, notAfter: notAfter).encode(to: encoder)
        }
    }

    /// An entry of `windows`: the window a current identity (invited or granted) has from now on,
    /// replacing the one it had; neither bound clears it (no window). A window moved or cleared
    /// before its `notAfter` cancels that expiry.
    public struct Window: Codable, Sendable, Hashable {
        public var rootHash: String
        public var notBefore: Date? { didSet { exact.notBefore = nil } }
        public var notAfter: Date? { didSet { exact.notAfter = nil } }
        fileprivate var exact = ExactBounds()

        public init(rootHash: String, notBefore: Date? = nil, notAfter: Date? = nil) {
            self.rootHash = rootHash
            self.notBefore = notBefore
            self.notAfter = notAfter
        }

        /// The bounds to the microsecond: as the request wrote them when decoded (`ExactBounds`).
        public var notBeforeMicros: Int64? { exact.notBefore ?? notBefore.map(RFC3339.micros) }
        public var notAfterMicros: Int64? { exact.notAfter ?? notAfter.map(RFC3339.micros) }

        enum CodingKeys: String, CodingKey { case rootHash, notBefore, notAfter }

        public init(from decoder: any Decoder) throws {
            try WindowKeys.refuseOthers(decoder)
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let (start, end) = (try RFC3339.decodeIfPresent(c, .notBefore), try RFC3339.decodeIfPresent(c, .notAfter))
            self.init(rootHash: try c.decode(String.self, forKey: .rootHash), notBefore: start?.date, notAfter: end?.date)
            exact = ExactBounds(notBefore: start?.micros, notAfter: end?.micros)
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(rootHash, forKey: .rootHash)
            try RFC3339.encodeIfPresent(notBefore, &c, .notBefore)
            try RFC3339.encodeIfPresent(notAfter, &c, .notAfter)
        }
    }

    public var added: [Added]?
    public var removed: [String]?
    public var windows: [Window]?

    /// Identities added without windows (the start's `defaultAccess` applies), by root hash.
    public init(added: [String]? = nil, removed: [String]? = nil, windows: [Window]? = nil) {
        self.init(adding: added.map { $0.map { Added(rootHash: $0) } }, removed: removed, windows: windows)
    }

    /// Identities added with or without windows.
    public init(adding added: [Added]?, removed: [String]? = nil, windows: [Window]? = nil) {
        self.added = added
        self.removed = removed
        self.windows = windows
    }
}

/// A decoded window's bounds in microseconds, exactly as the request wrote them: a `Date` far
/// from 1970 cannot hold every microsecond (near the year 9999 its steps are ~30 µs), and the
/// server keeps what was asked.
struct ExactBounds: Sendable, Hashable {
    var notBefore: Int64?
    var notAfter: Int64?
}

/// The keys a window object may have. Any other is refused: a misspelt bound (`not_after`)
/// would otherwise add an identity without its window, or clear the window it has.
enum WindowKeys: String, CodingKey, CaseIterable {
    case rootHash, notBefore, notAfter

    struct Named: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    static func refuseOthers(_ decoder: any Decoder) throws {
        let known = Set(allCases.map(\.rawValue))
        let container = try decoder.container(keyedBy: Named.self)
        if let unknown = container.allKeys.first(where: { !known.contains($0.stringValue) }) {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath + [unknown],
                    debugDescription: "unknown field \(unknown.stringValue): a window has rootHash, notBefore and notAfter"))
        }
    }
}
