import Crypto
import Foundation
import LedgerDomain
import LedgerStore
import Logging
import NIOCore
import PostgresNIO

/// Challenges and identity proofs. A proof request is stored first, then decided once: the
/// decider locks the request row (SKIP LOCKED, so several deciders never collide), consumes
/// the challenge in the same transaction, verifies, and appends the verdict with an event id
/// derived from the request id, so a decider that dies half-way leaves a request another
/// one finishes with the same single verdict.
public struct ProofService: Sendable {
    let store: any EventStore
    let client: PostgresClient
    let collaborations: CollaborationService
    let logger: Logger
    let challengeLifetime: TimeInterval
    let throttle: RejectionThrottle

    public init(
        store: any EventStore, client: PostgresClient, collaborations: CollaborationService, logger: Logger,
        challengeLifetime: TimeInterval = 120, throttle: RejectionThrottle = RejectionThrottle()
    ) {
        self.store = store
        self.client = client
        self.collaborations = collaborations
        self.logger = logger
        self.challengeLifetime = challengeLifetime
        self.throttle = throttle
    }

    public struct Challenge: Sendable, Equatable {
        public var challengeId: UUID
        public var challenge: [UInt8]
        public var expiresAt: Date
    }

    /// 32 random bytes for any authenticated account, on an existing collaboration.
    public func issueChallenge(collaborationId: String, caller: Caller) async throws -> Challenge {
        let id = try CollaborationService.validId(collaborationId)
        _ = try await collaborations.currentState(Streams.collaboration(id))
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let challengeId = UUID()
        let expires = Date().addingTimeInterval(challengeLifetime)
        let micros = Int64(expires.timeIntervalSince1970 * 1_000_000)
        try await client.query(
            """
            INSERT INTO ledger_challenges (challenge_id, collaboration_id, account, challenge, expires_at)
            VALUES (\(challengeId), \(id), \(caller.account), \(ByteBuffer(bytes: bytes)), to_timestamp(\(micros)::float8 / 1000000))
            """, logger: logger)
        return Challenge(challengeId: challengeId, challenge: bytes, expiresAt: expires)
    }

    public struct Submission: Sendable {
        public var challengeId: UUID
        public var signature: [UInt8]
        public var proof: IdentityProof
    }

    public enum Verdict: Sendable, Equatable {
        case granted(rootHash: String, account: String, position: Int64)
        case rejected(reason: String, message: String, position: Int64?)
        case pending(requestId: UUID)
    }

    /// Stores the request, then decides it at once in this process.
    public func submit(collaborationId: String, submission: Submission, caller: Caller) async throws -> Verdict {
        let id = try CollaborationService.validId(collaborationId)
        _ = try await collaborations.currentState(Streams.collaboration(id))
        // Structural checks first: bad input is refused with a 400 and changes nothing.
        do {
            _ = try submission.proof.validatedKey()
        } catch let rejection as ProofRejection {
            throw DomainError.invalid(rejection.description, code: rejection.reason)
        }
        guard submission.signature.count == 64 || (submission.signature.count >= 8 && submission.signature.count <= 72 && submission.signature.first == 0x30) else {
            throw DomainError.invalid("signature must be DER (up to 72 bytes) or raw r||s (64 bytes)", code: "invalid_signature_encoding")
        }
        guard await throttle.allows(caller.account) else {
            throw DomainError(.tooManyRequests, "too_many_rejections", "too many rejected proofs from this account; try later")
        }
        let requestId = UUID()
        let proof = submission.proof
        try await client.query(
            """
            INSERT INTO ledger_proof_requests
                (request_id, collaboration_id, account, challenge_id, signature, public_key, public_key_index, inclusion_hashes)
            VALUES (\(requestId), \(id), \(caller.account), \(submission.challengeId), \(ByteBuffer(bytes: submission.signature)),
                    \(ByteBuffer(bytes: proof.publicKey)), \(Int64(proof.publicKeyIndex)), \(proof.inclusionHashes.map { ByteBuffer(bytes: $0) }))
            """, logger: logger)
        let verdict = try await decide(requestId) ?? .pending(requestId: requestId)
        if case .rejected = verdict { await throttle.recordRejection(caller.account) }
        return verdict
    }

    /// Decides one pending request; nil when another decider holds it.
    public func decide(_ requestId: UUID) async throws -> Verdict? {
        do {
            return try await client.withTransaction(logger: logger) { connection in
                try await decide(requestId, connection)
            }
        } catch let error as PostgresTransactionError {
            throw error.closureError ?? error
        }
    }

    private func decide(_ requestId: UUID, _ connection: PostgresConnection) async throws -> Verdict? {
        let rows = try await connection.query(
            """
            SELECT collaboration_id, account, challenge_id, signature, public_key, public_key_index, inclusion_hashes
            FROM ledger_proof_requests WHERE request_id = \(requestId) AND status = 'pending'
            FOR UPDATE SKIP LOCKED
            """, logger: logger)
        var request: (String, String, UUID, ByteBuffer, ByteBuffer, Int64, [ByteBuffer])?
        for try await row in rows.decode((String, String, UUID, ByteBuffer, ByteBuffer, Int64, [ByteBuffer]).self) { request = row }
        guard let (collaborationId, account, challengeId, signature, publicKey, index, hashes) = request else { return nil }
        let proof = IdentityProof(
            publicKey: Array(buffer: publicKey), publicKeyIndex: UInt64(index), inclusionHashes: hashes.map { Array(buffer: $0) })

        // The challenge: issued, for this caller and collaboration, unexpired, unused.
        let challengeRows = try await connection.query(
            """
            SELECT collaboration_id, account, challenge, expires_at < now(), used_by_request
            FROM ledger_challenges WHERE challenge_id = \(challengeId) FOR UPDATE
            """, logger: logger)
        var challenge: (String, String, ByteBuffer, Bool, UUID?)?
        for try await row in challengeRows.decode((String, String, ByteBuffer, Bool, UUID?).self) { challenge = row }

        var rejection: ProofRejection?
        var rootHash: RootHash?
        if let (challengeCollab, challengeAccount, bytes, expired, usedBy) = challenge {
            if challengeAccount != account { rejection = .challengeWrongAccount }
            else if challengeCollab != collaborationId { rejection = .challengeWrongCollaboration }
            else if usedBy != nil && usedBy != requestId { rejection = .challengeUsed }
            else if expired { rejection = .challengeExpired }
            else {
                try await connection.query(
                    "UPDATE ledger_challenges SET used_by_request = \(requestId) WHERE challenge_id = \(challengeId)", logger: logger)
                do {
                    rootHash = try proof.verify(signature: Array(buffer: signature), challenge: Array(buffer: bytes))
                } catch let error as ProofRejection {
                    rejection = error
                }
            }
        } else {
            rejection = .challengeUnknown
        }

        // Append the verdict, decided on the collaboration's current state.
        let stream = Streams.collaboration(collaborationId)
        let eventId = CollaborationService.derivedUUID("verdict\u{0}\(requestId)")
        let metadata = EventMetadata(actor: account, causationId: requestId.uuidString.lowercased())
        var appended: AppendResult?
        var finalRejection = rejection
        for attempt in 1...8 {
            let (state, version, _) = try await collaborations.currentState(stream)
            finalRejection = rejection
            if finalRejection == nil, let rootHash {
                finalRejection = CollaborationDecisions.decideAccess(state: state, rootHash: rootHash, account: account)
            }
            let event: CollaborationEvent =
                if let finalRejection {
                    .proofRejected(.init(
                        account: account, proofRequestId: requestId.uuidString.lowercased(),
                        challengeId: challengeId.uuidString.lowercased(), reason: finalRejection.reason, rootHash: rootHash))
                } else {
                    .accessGranted(.init(
                        rootHash: rootHash!, account: account, proofRequestId: requestId.uuidString.lowercased(),
                        challengeId: challengeId.uuidString.lowercased(), publicKey: Base64.encode(proof.publicKey),
                        publicKeyIndex: proof.publicKeyIndex))
                }
            var next = state
            next.apply(event)
            do {
                appended = try await store.append(.init(
                    streamId: stream, expectedVersion: .exact(version), events: [event.newEvent(metadata: metadata, id: eventId)],
                    state: next.json))
                if appended!.duplicate {
                    // Decided before by a decider that died before recording it here: keep that verdict.
                    let stored = try await store.readStream(stream, afterVersion: appended!.version - 1).first
                    if let stored, case .proofRejected(let r) = try CollaborationEvent(stored) {
                        finalRejection = ProofRejection.allCases(r.reason)
                    } else {
                        finalRejection = nil
                    }
                }
                break
            } catch let error as StoreError where error.isVersionConflict && attempt < 8 {
                continue
            }
        }
        guard let appended else { throw StoreError.versionConflict(stream: stream, expected: .any, actual: -1) }
        let status = finalRejection == nil ? "granted" : "rejected"
        try await connection.query(
            """
            UPDATE ledger_proof_requests
            SET status = \(status), reason = \(finalRejection?.reason), root_hash = \(rootHash.map { ByteBuffer(bytes: $0.bytes) }),
                decided_position = \(appended.lastPosition), decided_at = now()
            WHERE request_id = \(requestId)
            """, logger: logger)
        ProofMetrics.verdict(finalRejection?.reason ?? "granted")
        if let finalRejection {
            return .rejected(reason: finalRejection.reason, message: finalRejection.description, position: appended.lastPosition)
        }
        return .granted(rootHash: rootHash!.base64, account: account, position: appended.lastPosition)
    }

    /// The verdict of a stored request, for the status URL.
    public func status(requestId: UUID, caller: Caller) async throws -> Verdict {
        let rows = try await client.query(
            """
            SELECT account, status, reason, root_hash, decided_position FROM ledger_proof_requests WHERE request_id = \(requestId)
            """, logger: logger)
        for try await (account, status, reason, rootHash, position) in rows.decode((String, String, String?, ByteBuffer?, Int64?).self) {
            guard account == caller.account else { break }
            switch status {
            case "granted":
                return .granted(rootHash: Base64.encode(Array(buffer: rootHash!)), account: account, position: position!)
            case "rejected":
                return .rejected(reason: reason ?? "rejected", message: reason ?? "rejected", position: position)
            default:
                return .pending(requestId: requestId)
            }
        }
        throw DomainError(.notFound, "not_found", "proof request not found")
    }
}

extension ProofRejection {
    /// A rejection read back from the log by its reason code (message details are not kept).
    static func allCases(_ reason: String) -> ProofRejection {
        let known: [ProofRejection] = [
            .badSignature, .unknownIdentity, .identityRemoved, .identityClaimed, .challengeUnknown, .challengeExpired,
            .challengeUsed, .challengeWrongAccount, .challengeWrongCollaboration,
        ]
        return known.first { $0.reason == reason } ?? .invalidKey(reason)
    }
}

/// Bounds how many rejected proofs one account can have recorded per minute, so a flood
/// cannot grow the log without bound.
public actor RejectionThrottle {
    let limit: Int
    let window: TimeInterval
    private var recent: [String: [Date]] = [:]

    public init(limit: Int = 20, window: TimeInterval = 60) {
        self.limit = limit
        self.window = window
    }

    func allows(_ account: String) -> Bool {
        let cutoff = Date().addingTimeInterval(-window)
        recent[account] = recent[account]?.filter { $0 > cutoff }
        return (recent[account]?.count ?? 0) < limit
    }

    func recordRejection(_ account: String) {
        recent[account, default: []].append(Date())
    }
}
