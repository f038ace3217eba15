import Foundation

// The bodies of the privacy endpoints (SPEC "Personal data and erasure"), for the server, the
// SDK and the tests.

/// `POST /v1/privacy/erasures`.
public struct ErasureRequest: Codable, Sendable, Hashable {
    public var account: String
    /// Why (kept in the erasure's event, e.g. the request's reference).
    public var reason: String

    public init(account: String, reason: String) {
        self.account = account
        self.reason = reason
    }
}

/// An erasure's answer; a repeated request gets the first one's.
public struct Erasure: Codable, Sendable, Hashable {
    /// A value erased: which kind, and its commitment (which no one can open any more).
    public struct Value: Codable, Sendable, Hashable {
        public var kind: String
        public var commitment: String

        public init(kind: String, commitment: String) {
            self.kind = kind
            self.commitment = commitment
        }
    }
    public var account: String
    /// The name the events gave the account; reads now show `erased:<pseudonym>`.
    public var pseudonym: String
    public var erasedAt: Date
    /// The position of the `PersonalDataErased` event.
    public var position: Int64
    public var values: [Value]
    /// Events from before pseudonyms and commitments that name the account in plaintext: the log
    /// keeps them (changing them would break every proof).
    public var unerasedPositions: [Int64]

    public init(account: String, pseudonym: String, erasedAt: Date, position: Int64, values: [Value], unerasedPositions: [Int64]) {
        self.account = account
        self.pseudonym = pseudonym
        self.erasedAt = erasedAt
        self.position = position
        self.values = values
        self.unerasedPositions = unerasedPositions
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

    public init(account: String, pseudonym: String, values: [Value], positions: [Int64]) {
        self.account = account
        self.pseudonym = pseudonym
        self.values = values
        self.positions = positions
    }
}
