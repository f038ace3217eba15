import Foundation
// The wire types (the reads' bodies, ShareOptions, HighlightKind, JSONValue): apps see them
// through `import LedgerClient`, defined once in LedgerWire for the server and the SDK.
@_exported import LedgerWire
// The log's math and keys (NoteVerifier, WitnessPolicy, Tile), to verify it from its tiles.
@_exported import TransparencyLog

// What the handlers' calls answer in the app's terms: root hashes, keys, signatures and
// challenges are `Data` here; on the wire they are standard base64.

/// Who starts the collaboration, as shown in Messages.
public struct Initiator: Sendable, Hashable {
    public var handle: String
    public var name: String?
    public init(handle: String, name: String? = nil) {
        self.handle = handle
        self.name = name
    }
}

/// What `action.fulfill(using:collaborationIdentifier:)` needs.
public struct PreparedCollaboration: Sendable, Hashable {
    public var url: URL
    public var identifier: String
    public var position: Int64
}

public struct ParticipantsUpdate: Sendable, Hashable {
    /// The identities that were new (adding a current identity changes nothing).
    public var added: [Data]
    /// The identities that were current and are removed.
    public var removed: [Data]
    /// The accounts the removals revoked.
    public var revokedAccounts: [String]
    /// The identities whose window `windows` changed (a window equal to the one an identity
    /// already has changes nothing).
    public var windowsChanged: [Data]
    public var position: Int64
}

/// An identity's access window (SPEC "Time-bound access"): it may prove access from `notBefore`
/// (inclusive; nil: at once) until `notAfter` (exclusive; nil: no end), to the microsecond. At
/// `notAfter` the ledger records `AccessExpired` and refuses its proofs (`access_expired`);
/// before `notBefore` they are refused with `access_not_yet_valid`. The server refuses a bound
/// outside the years 1 to 9999, or `notBefore` not before `notAfter`, with 400 `invalid_window`.
public struct IdentityWindow: Sendable, Hashable {
    /// The identity's root hash (`SWPerson.Identity.rootHash`).
    public var rootHash: Data
    public var notBefore: Date?
    public var notAfter: Date?

    public init(rootHash: Data, notBefore: Date? = nil, notAfter: Date? = nil) {
        self.rootHash = rootHash
        self.notBefore = notBefore
        self.notAfter = notAfter
    }
}

/// A challenge for `SWHighlightCenter.getSignedIdentityProof(for:using:)`.
public struct Challenge: Sendable, Hashable {
    public var id: String
    public var collaborationID: String
    /// The 32 bytes the device signs.
    public var data: Data
    public var expiresAt: Date
}

/// The answer to a proof: granted, or not decided within the server's wait (poll `statusURL`
/// with `proofStatus`). A refusal is thrown as `LedgerError` with code `proof_rejected`.
public enum ProofResult: Sendable, Hashable {
    case granted(rootHash: Data, accountID: String, position: Int64)
    case pending(requestID: String, statusURL: String)
}

/// A refusal from the ledger: the HTTP status, the stable error code, the message, and for
/// `proof_rejected` the verifier's reason (e.g. `bad_signature`, `identity_removed`).
public struct LedgerError: Error, Sendable, Hashable, CustomStringConvertible {
    public var status: Int
    public var code: String
    public var message: String
    public var reason: String?
    /// A write of every shard cut short (`cut_short`): what each shard did, in the shards' order
    /// (docs/SCALING.md, "What a fan-out cut short answers"); nil for every other refusal.
    public var shards: [CutShort.Part]? = nil

    public var description: String {
        "ledger error \(status) \(code)\(reason.map { " (\($0))" } ?? ""): \(message)"
    }
}

extension LedgerError {
    /// The ledger's error codes, typed: the catalogue the server answers from (`ErrorCode`; the
    /// raw text stays in `code`). A code this SDK does not know yet (a newer server) is `unknown`.
    public typealias Code = ErrorCode

    /// `code`, typed.
    public var kind: Code { Code(rawValue: code) ?? .unknown }
}
