import Foundation

// The bodies of the privacy endpoints (SPEC "Personal data and erasure"), for the server, the
// SDK and the tests.

/// `POST /v1/privacy/erasures`.
public struct ErasureRequest: Codable, Sendable, Hashable {
    public var account: String
    /// Why: a short reference (a ticket id), kept in the erasure's event; `isValidReason`.
    public var reason: String

    public init(account: String, reason: String) {
        self.account = account
        self.reason = reason
    }

    /// What a reason may be, as the 400 names it: it enters the log for ever, so no free text.
    public static let reasonRule =
        "reason must be a short reference (a ticket id): 1 to 64 characters of A-Z a-z 0-9 . _ : / # -, i.e. ^[A-Za-z0-9._:/#-]{1,64}$"

    /// `^[A-Za-z0-9._:/#-]{1,64}$`.
    public static func isValidReason(_ reason: String) -> Bool {
        (1...64).contains(reason.utf8.count)
            && reason.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "/"), UInt8(ascii: "#"), UInt8(ascii: "-"):
                    true
                default: false
                }
            }
    }
}

/// An erasure's answer. It never names the pseudonym: the caller knows the account, and nothing
/// the ledger answers or keeps puts the two side by side. The first erasure of an account:
/// `{erasedAt, position, values, unerasedPositions}`. An account with nothing held (never known,
/// or erased before): `{"held": false}`, so a retried request is safe (with `unerasedPositions`
/// when events from before pseudonyms name it in plaintext). On shards: `{held, shards}`, each
/// shard's own answer in `shards` with its `shard` (its positions are that shard's), `held` true
/// if any shard held something.
public struct Erasure: Codable, Sendable, Hashable {
    /// A kind of value erased (`title`, `handle`, `name`, `localIdentifier`, `summary`,
    /// `groupTitle`, `optionTitle`) and how many of it.
    public struct Value: Codable, Sendable, Hashable {
        public var kind: String
        public var count: Int

        public init(kind: String, count: Int) {
            self.kind = kind
            self.count = count
        }
    }
    /// False when nothing was held for the account (then only `unerasedPositions` may be set).
    public var held: Bool
    public var erasedAt: Date?
    /// The position of the `PersonalDataErased` event.
    public var position: Int64?
    /// By kind.
    public var values: [Value]
    /// Events that keep one of the account's values in plaintext: those from before pseudonyms
    /// naming the account, and its starts from before local identifiers and share options were
    /// committed to (Migrations/sql/0020). The log keeps them (changing them would break every proof).
    public var unerasedPositions: [Int64]
    /// On shards, in `shards`: the shard that answered.
    public var shard: Int?
    /// On shards: each shard's answer, in the shards' order.
    public var shards: [Erasure]?

    public init(erasedAt: Date, position: Int64, values: [Value], unerasedPositions: [Int64]) {
        self.init(held: true, erasedAt: erasedAt, position: position, values: values, unerasedPositions: unerasedPositions)
    }

    /// Nothing held for the account.
    public static func notHeld(unerasedPositions: [Int64] = []) -> Erasure {
        Erasure(held: false, erasedAt: nil, position: nil, values: [], unerasedPositions: unerasedPositions)
    }

    /// The answer of a ledger on shards: each shard's (`parts`, in the shards' order) named by its index.
    public static func sharded(_ parts: [Erasure]) -> Erasure {
        var answer = Erasure(held: parts.contains { $0.held }, erasedAt: nil, position: nil, values: [], unerasedPositions: [])
        answer.shards = parts.enumerated().map { index, part in
            var part = part
            part.shard = index
            return part
        }
        return answer
    }

    private init(held: Bool, erasedAt: Date?, position: Int64?, values: [Value], unerasedPositions: [Int64]) {
        self.held = held
        self.erasedAt = erasedAt
        self.position = position
        self.values = values
        self.unerasedPositions = unerasedPositions
    }

    enum CodingKeys: String, CodingKey { case held, erasedAt, position, values, unerasedPositions, shard, shards }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        held = try c.decodeIfPresent(Bool.self, forKey: .held) ?? true
        erasedAt = try c.decodeIfPresent(Date.self, forKey: .erasedAt)
        position = try c.decodeIfPresent(Int64.self, forKey: .position)
        values = try c.decodeIfPresent([Value].self, forKey: .values) ?? []
        unerasedPositions = try c.decodeIfPresent([Int64].self, forKey: .unerasedPositions) ?? []
        shard = try c.decodeIfPresent(Int.self, forKey: .shard)
        shards = try c.decodeIfPresent([Erasure].self, forKey: .shards)
    }

    /// The first erasure's four fields; `{"held": false}` (and `unerasedPositions` if any) otherwise.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(shard, forKey: .shard)
        if let shards {
            try c.encode(held, forKey: .held)
            try c.encode(shards, forKey: .shards)
        } else if held {
            try c.encodeIfPresent(erasedAt, forKey: .erasedAt)
            try c.encodeIfPresent(position, forKey: .position)
            try c.encode(values, forKey: .values)
            try c.encode(unerasedPositions, forKey: .unerasedPositions)
        } else {
            try c.encode(false, forKey: .held)
            if !unerasedPositions.isEmpty { try c.encode(unerasedPositions, forKey: .unerasedPositions) }
        }
    }
}

/// `GET /v1/privacy/export?account=`: every personal value held for an account, with the
/// positions of the events that reference it.
public struct PersonalDataExport: Codable, Sendable, Hashable {
    public struct Value: Codable, Sendable, Hashable {
        public var kind: String
        public var value: String
        public var commitment: String
        public var positions: [Int64]

        public init(kind: String, value: String, commitment: String, positions: [Int64]) {
            self.kind = kind
            self.value = value
            self.commitment = commitment
            self.positions = positions
        }
    }
    public var account: String
    public var pseudonym: String
    public var values: [Value]
    /// Events naming the account: by its pseudonym as owner, actor or the account granted or
    /// revoked (and, before pseudonyms, in plaintext).
    public var positions: [Int64]
    /// On shards, in `shards`: the shard that answered (its pseudonym of the account, its positions).
    public var shard: Int?
    /// On shards: each shard's export that holds something of the account, `{account, shards}`
    /// alone at the top.
    public var shards: [PersonalDataExport]?

    public init(account: String, pseudonym: String, values: [Value], positions: [Int64]) {
        self.account = account
        self.pseudonym = pseudonym
        self.values = values
        self.positions = positions
    }

    /// The export of a ledger on shards: each shard's that holds something (`parts`, by shard index).
    public static func sharded(account: String, _ parts: [(shard: Int, export: PersonalDataExport)]) -> PersonalDataExport {
        var answer = PersonalDataExport(account: account, pseudonym: "", values: [], positions: [])
        answer.shards = parts.map { shard, export in
            var export = export
            export.shard = shard
            return export
        }
        return answer
    }

    enum CodingKeys: String, CodingKey { case account, pseudonym, values, positions, shard, shards }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        account = try c.decode(String.self, forKey: .account)
        shards = try c.decodeIfPresent([PersonalDataExport].self, forKey: .shards)
        // A sharded export's top holds no pseudonym: each shard has its own.
        let sharded = shards != nil
        pseudonym = try sharded ? c.decodeIfPresent(String.self, forKey: .pseudonym) ?? "" : c.decode(String.self, forKey: .pseudonym)
        values = try sharded ? c.decodeIfPresent([Value].self, forKey: .values) ?? [] : c.decode([Value].self, forKey: .values)
        positions = try sharded ? c.decodeIfPresent([Int64].self, forKey: .positions) ?? [] : c.decode([Int64].self, forKey: .positions)
        shard = try c.decodeIfPresent(Int.self, forKey: .shard)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(account, forKey: .account)
        if let shards { return try c.encode(shards, forKey: .shards) }
        try c.encodeIfPresent(shard, forKey: .shard)
        try c.encode(pseudonym, forKey: .pseudonym)
        try c.encode(values, forKey: .values)
        try c.encode(positions, forKey: .positions)
    }
}
