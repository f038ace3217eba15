import Foundation
// ShareOptions, HighlightKind and JSONValue: apps see them through `import LedgerClient`.
@_exported import LedgerWire

// The v1 API's bodies as the app sees them. Root hashes, keys, signatures and challenges are
// `Data` here; on the wire they are standard base64.

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
    public var added: [Data]
    public var removed: [Data]
    public var revokedAccounts: [String]
    public var position: Int64
}

public struct Collaboration: Codable, Sendable, Hashable {
    public struct MemberCounts: Codable, Sendable, Hashable {
        public var invited: Int
        public var granted: Int
        public var removed: Int
    }
    public var collaborationId: String
    public var localIdentifier: String
    public var title: String
    public var initiatorHandle: String
    public var initiatorName: String?
    public var owner: String
    public var universalLink: String
    public var shareOptions: ShareOptions?
    public var selectedOptions: [String: [String]]
    public var memberCounts: MemberCounts
    public var startedAt: Date
    public var position: Int64
}

public struct Members: Codable, Sendable, Hashable {
    public struct Member: Codable, Sendable, Hashable {
        /// Base64 of the identity's root hash; `rootHashData` for the bytes.
        public var rootHash: String
        public var state: String
        public var accountId: String?
        public var invitedAt: Date?
        public var grantedAt: Date?
        public var rootHashData: Data? { Data(base64Encoded: rootHash) }
    }
    public var collaborationId: String
    public var owner: String
    public var position: Int64
    public var members: [Member]
}

public struct History: Codable, Sendable, Hashable {
    public struct Entry: Codable, Sendable, Hashable {
        public var position: Int64
        public var version: Int64
        public var type: String
        public var time: Date
        public var actor: String?
        public var data: JSONValue
    }
    public var collaborationId: String
    public var events: [Entry]
}

public struct Highlights: Codable, Sendable, Hashable {
    public struct Notice: Codable, Sendable, Hashable {
        public var position: Int64
        public var kind: String
        public var trigger: String?
        public var mentionedRootHash: String?
        public var accountId: String
        public var time: Date
    }
    public var collaborationId: String
    public var highlights: [Notice]
}

public struct MyCollaborations: Codable, Sendable, Hashable {
    public struct Entry: Codable, Sendable, Hashable {
        public var collaborationId: String
        public var title: String
        public var role: String
    }
    public var accountId: String
    public var collaborations: [Entry]
}

public struct AccessAudit: Codable, Sendable, Hashable {
    public struct Record: Codable, Sendable, Hashable {
        public var position: Int64
        public var time: Date
        public var collaborationId: String
        public var accountId: String
        public var rootHash: String
        public var change: String
        public var reason: String?
        public var actor: String?
    }
    public var records: [Record]
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

    public var description: String {
        "ledger error \(status) \(code)\(reason.map { " (\($0))" } ?? ""): \(message)"
    }
}
