import Foundation

// The bodies of the v1 commands, proofs and health checks (openapi.yaml), defined once for the
// server, the SDK and the tests. Binary values (root hashes, keys, signatures, challenges) are
// standard base64 strings; dates RFC 3339.

/// `POST /v1/collaborations`.
public struct StartRequest: Codable, Sendable, Hashable {
    public var localIdentifier: String
    public var title: String
    public var initiatorHandle: String
    public var initiatorName: String?
    public var shareOptions: ShareOptions?
    /// The window every identity added without one gets, from the moment it is added
    /// (SPEC "Time-bound access"); absent: such identities have no window.
    public var defaultAccess: DefaultAccessBody?

    public init(
        localIdentifier: String, title: String, initiatorHandle: String, initiatorName: String? = nil, shareOptions: ShareOptions? = nil,
        defaultAccess: DefaultAccessBody? = nil
    ) {
        self.localIdentifier = localIdentifier
        self.title = title
        self.initiatorHandle = initiatorHandle
        self.initiatorName = initiatorName
        self.shareOptions = shareOptions
        self.defaultAccess = defaultAccess
    }
}

/// A start's `defaultAccess`: `{"duration": "P7D"}`, an ISO 8601 duration (`PnYnMnWnDTnHnMnS`,
/// e.g. `P7D`, `PT12H`, `P1DT12H`) of at least 1 second and at most 100 years; the server
/// refuses anything else with 400 `invalid_window`.
public struct DefaultAccessBody: Codable, Sendable, Hashable {
    public var duration: String

    public init(duration: String) { self.duration = duration }
}

public struct StartResponse: Codable, Sendable, Hashable {
    public var collaborationId: String
    public var universalLink: String
    public var position: Int64

    public init(collaborationId: String, universalLink: String, position: Int64) {
        self.collaborationId = collaborationId
        self.universalLink = universalLink
        self.position = position
    }
}

public struct ParticipantsResponse: Codable, Sendable, Hashable {
    public var added: [String]
    public var removed: [String]
    public var revokedAccounts: [String]
    /// The identities whose window `windows` changed (an entry equal to the window an identity
    /// already has changes nothing and is not listed).
    public var windowsChanged: [String]
    public var position: Int64

    public init(added: [String], removed: [String], revokedAccounts: [String], windowsChanged: [String] = [], position: Int64) {
        self.added = added
        self.removed = removed
        self.revokedAccounts = revokedAccounts
        self.windowsChanged = windowsChanged
        self.position = position
    }

    enum CodingKeys: String, CodingKey { case added, removed, revokedAccounts, windowsChanged, position }

    /// An answer without `windowsChanged` (a server from before windows) reads as none changed.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        added = try c.decode([String].self, forKey: .added)
        removed = try c.decode([String].self, forKey: .removed)
        revokedAccounts = try c.decode([String].self, forKey: .revokedAccounts)
        windowsChanged = try c.decodeIfPresent([String].self, forKey: .windowsChanged) ?? []
        position = try c.decode(Int64.self, forKey: .position)
    }
}

/// `POST /v1/collaborations/{id}/highlights`; `kind` is a `HighlightKind` raw value.
public struct HighlightRequest: Codable, Sendable, Hashable {
    public var kind: String
    public var trigger: String?
    public var mentionedRootHash: String?

    public init(kind: String, trigger: String? = nil, mentionedRootHash: String? = nil) {
        self.kind = kind
        self.trigger = trigger
        self.mentionedRootHash = mentionedRootHash
    }
}

public struct PositionResponse: Codable, Sendable, Hashable {
    public var position: Int64

    public init(position: Int64) { self.position = position }
}

/// `POST /v1/challenges`.
public struct ChallengeRequest: Codable, Sendable, Hashable {
    public var collaborationId: String

    public init(collaborationId: String) { self.collaborationId = collaborationId }
}

public struct ChallengeResponse: Codable, Sendable, Hashable {
    public var challengeId: String
    public var challenge: String
    public var expiresAt: Date

    public init(challengeId: String, challenge: String, expiresAt: Date) {
        self.challengeId = challengeId
        self.challenge = challenge
        self.expiresAt = expiresAt
    }
}

/// `POST /v1/collaborations/{id}/proofs`: `SWSignedPersonIdentityProof`'s parts.
public struct ProofRequest: Codable, Sendable, Hashable {
    public struct Proof: Codable, Sendable, Hashable {
        public var publicKey: String
        public var publicKeyIndex: UInt64
        public var inclusionHashes: [String]

        public init(publicKey: String, publicKeyIndex: UInt64, inclusionHashes: [String]) {
            self.publicKey = publicKey
            self.publicKeyIndex = publicKeyIndex
            self.inclusionHashes = inclusionHashes
        }
    }
    public var challengeId: String
    public var signature: String
    public var proof: Proof

    public init(challengeId: String, signature: String, proof: Proof) {
        self.challengeId = challengeId
        self.signature = signature
        self.proof = proof
    }
}

/// A proof's answer: `granted` (200; root hash, account, position) or `pending` (202; request
/// id and status URL). A rejection is an `ErrorBody` with code `proof_rejected` and a reason.
public struct ProofAnswer: Codable, Sendable, Hashable {
    public var status: String
    public var rootHash: String?
    public var accountId: String?
    public var position: Int64?
    public var requestId: String?
    public var statusUrl: String?

    public static func granted(rootHash: String, accountId: String, position: Int64) -> ProofAnswer {
        ProofAnswer(status: "granted", rootHash: rootHash, accountId: accountId, position: position)
    }

    public static func pending(requestId: String, statusUrl: String) -> ProofAnswer {
        ProofAnswer(status: "pending", requestId: requestId, statusUrl: statusUrl)
    }

    public init(
        status: String, rootHash: String? = nil, accountId: String? = nil, position: Int64? = nil, requestId: String? = nil,
        statusUrl: String? = nil
    ) {
        self.status = status
        self.rootHash = rootHash
        self.accountId = accountId
        self.position = position
        self.requestId = requestId
        self.statusUrl = statusUrl
    }
}

/// Every refusal: `{"error": {"code", "message", "reason"?}}`.
public struct ErrorBody: Codable, Sendable, Hashable {
    public struct Detail: Codable, Sendable, Hashable {
        public var code: String
        public var message: String
        /// For `proof_rejected`: the verifier's reason.
        public var reason: String?

        public init(code: String, message: String, reason: String? = nil) {
            self.code = code
            self.message = message
            self.reason = reason
        }
    }
    public var error: Detail

    public init(error: Detail) { self.error = error }
}

/// `/health` and `/ready`.
public struct HealthResponse: Codable, Sendable, Hashable {
    public var status: String

    public init(status: String) { self.status = status }
}
