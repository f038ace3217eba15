import Foundation
import LedgerDomain
import LedgerStore
import Logging
import Metrics
import NIOCore
import PostgresNIO

/// Decides stored proof requests, each exactly once.
///
/// One decision is one transaction on the request row: lock it (`FOR UPDATE SKIP LOCKED`, so
/// deciders never wait on each other and never decide the same request twice at once), lock
/// and consume the challenge, verify, append the verdict, mark the request decided and NOTIFY.
/// The verdict event's id derives from the request id. A decider that dies before its commit
/// leaves the request pending and the challenge unused (the transaction rolls back); one that
/// dies after appending the verdict but before the commit leaves a request whose next decider
/// meets the stored verdict (same event id) and records that one, not a second.
public struct ProofDecider: Sendable {
    let client: PostgresClient
    let collaborations: Collaborations
    let logger: Logger
    let hooks: Hooks

    /// Test seams: run inside the decision's transaction.
    public struct Hooks: Sendable {
        /// After the request row is locked, with the decision's connection.
        public var afterLock: (@Sendable (UUID, PostgresConnection) async throws -> Void)?
        /// After the verdict event is in the log, before the request row is marked decided.
        public var afterAppend: (@Sendable (UUID) async throws -> Void)?

        public init(
            afterLock: (@Sendable (UUID, PostgresConnection) async throws -> Void)? = nil, afterAppend: (@Sendable (UUID) async throws -> Void)? = nil
        ) {
            self.afterLock = afterLock
            self.afterAppend = afterAppend
        }
    }

    public init(client: PostgresClient, store: any EventStore, logger: Logger, hooks: Hooks = Hooks()) {
        self.client = client
        self.collaborations = Collaborations(store: store)
        self.logger = logger
        self.hooks = hooks
    }

    /// Decides one pending request; nil when it is decided already or another decider holds it.
    public func decide(_ requestId: UUID) async throws -> Verdict? {
        // Bounded: a decision stuck on a dead connection is abandoned (rolled back with that
        // connection), and the request, still pending, goes to the next sweep.
        try await withDeadline(.seconds(30), "deciding proof request \(requestId)") {
            do {
                return try await client.withTransaction(logger: logger) { connection in
                    try await decide(requestId, connection)
                }
            } catch let error as PostgresTransactionError {
                throw error.closureError ?? error
            }
        }
    }

    /// Pending requests, oldest first, that no decider holds right now.
    public func pending(limit: Int) async throws -> [UUID] {
        let rows = try await client.query(
            """
            SELECT request_id FROM ledger_proof_requests WHERE status = 'pending'
            ORDER BY created_at LIMIT \(Int64(limit)) FOR UPDATE SKIP LOCKED
            """, logger: logger)
        var ids: [UUID] = []
        for try await id in rows.decode(UUID.self) { ids.append(id) }
        return ids
    }

    /// Requests waiting for a verdict (the proof queue depth).
    public func pendingCount() async throws -> Int {
        let rows = try await client.query("SELECT count(*) FROM ledger_proof_requests WHERE status = 'pending'", logger: logger)
        for try await n in rows.decode(Int64.self) { return Int(n) }
        return 0
    }

    private struct Request {
        var collaborationId: String
        var account: String
        var challengeId: UUID
        var signature: [UInt8]
        var proof: IdentityProof
    }

    private func decide(_ requestId: UUID, _ connection: PostgresConnection) async throws -> Verdict? {
        guard let request = try await lockRequest(requestId, connection) else { return nil }
        try await hooks.afterLock?(requestId, connection)
        var rejection: ProofRejection?
        var rootHash: RootHash?
        do {
            let challenge = try await consumeChallenge(request, requestId: requestId, connection)
            rootHash = try request.proof.verify(signature: request.signature, challenge: challenge)
        } catch let error as ProofRejection {
            rejection = error
        }

        // The verdict, decided on the collaboration's current state.
        let id = request.collaborationId
        let requestText = requestId.uuidString.lowercased()
        let challengeText = request.challengeId.uuidString.lowercased()
        var decided: CollaborationEvent?
        let outcome = try await collaborations.decideAndAppend(id) { state in
            var reason = rejection
            if reason == nil, let rootHash {
                reason = CollaborationDecisions.decideAccess(state: state, rootHash: rootHash, account: request.account)
            }
            let event: CollaborationEvent =
                if let reason {
                    .proofRejected(.init(
                        account: request.account, proofRequestId: requestText, challengeId: challengeText,
                        reason: reason.reason, rootHash: rootHash))
                } else {
                    .accessGranted(.init(
                        rootHash: rootHash!, account: request.account, proofRequestId: requestText, challengeId: challengeText,
                        publicKey: Base64.encode(request.proof.publicKey), publicKeyIndex: request.proof.publicKeyIndex))
                }
            decided = event
            return .init(
                events: [event], metadata: EventMetadata(actor: request.account, causationId: requestText),
                eventId: Identifiers.derivedUUID("verdict\u{0}\(requestText)"))
        }
        try await hooks.afterAppend?(requestId)
        // The verdict is the event in the log, whichever decider appended it.
        let verdict = try outcome.stored.first.map { try CollaborationEvent($0) } ?? decided!
        let position = outcome.position
        let finalReason: String?
        let finalRoot: RootHash?
        var message = ""
        switch verdict {
        case .accessGranted(let granted):
            finalReason = nil
            finalRoot = granted.rootHash
        case .proofRejected(let rejected):
            finalReason = rejected.reason
            finalRoot = rejected.rootHash
            message = (rejection?.reason == rejected.reason ? rejection : nil)?.description
                ?? ProofRejection.named(rejected.reason).description
        default:
            throw StoreError.invalidRequest("verdict event of request \(requestText) has an unexpected type")
        }
        try await connection.query(
            """
            WITH decided AS (
                UPDATE ledger_proof_requests
                SET status = \(finalReason == nil ? "granted" : "rejected"), reason = \(finalReason),
                    root_hash = \(finalRoot.map { ByteBuffer(bytes: $0.bytes) }), decided_position = \(position), decided_at = now()
                WHERE request_id = \(requestId)
                RETURNING request_id)
            SELECT pg_notify(\(VerifierChannels.verdicts), request_id::text) FROM decided
            """, logger: logger)
        Counter(label: "ledger_proof_verdicts_total", dimensions: [("verdict", finalReason ?? "granted")]).increment()
        if let finalReason {
            return .rejected(reason: finalReason, message: message.isEmpty ? finalReason : message, position: position)
        }
        return .granted(rootHash: finalRoot!.base64, account: request.account, position: position)
    }

    private func lockRequest(_ requestId: UUID, _ connection: PostgresConnection) async throws -> Request? {
        let rows = try await connection.query(
            """
            SELECT collaboration_id, account, challenge_id, signature, public_key, public_key_index, inclusion_hashes
            FROM ledger_proof_requests WHERE request_id = \(requestId) AND status = 'pending'
            FOR UPDATE SKIP LOCKED
            """, logger: logger)
        for try await (collaboration, account, challengeId, signature, publicKey, index, hashes)
            in rows.decode((String, String, UUID, ByteBuffer, ByteBuffer, Int64, [ByteBuffer]).self)
        {
            return Request(
                collaborationId: collaboration, account: account, challengeId: challengeId, signature: Array(buffer: signature),
                proof: IdentityProof(
                    publicKey: Array(buffer: publicKey), publicKeyIndex: UInt64(index), inclusionHashes: hashes.map { Array(buffer: $0) }))
        }
        return nil
    }

    /// The challenge must be issued to this account for this collaboration, unexpired and
    /// unused; it is marked used by this request in the decision's transaction. The common
    /// case is one conditional UPDATE; only a refused challenge is looked at again for why.
    private func consumeChallenge(_ request: Request, requestId: UUID, _ connection: PostgresConnection) async throws -> [UInt8] {
        let consumed = try await connection.query(
            """
            UPDATE ledger_challenges SET used_by_request = \(requestId)
            WHERE challenge_id = \(request.challengeId) AND account = \(request.account)
              AND collaboration_id = \(request.collaborationId) AND expires_at >= now()
              AND (used_by_request IS NULL OR used_by_request = \(requestId))
            RETURNING challenge
            """, logger: logger)
        for try await bytes in consumed.decode(ByteBuffer.self) { return Array(buffer: bytes) }
        let rows = try await connection.query(
            """
            SELECT collaboration_id, account, expires_at < now(), used_by_request
            FROM ledger_challenges WHERE challenge_id = \(request.challengeId)
            """, logger: logger)
        for try await (collaboration, account, expired, usedBy) in rows.decode((String, String, Bool, UUID?).self) {
            if account != request.account { throw ProofRejection.challengeWrongAccount }
            if collaboration != request.collaborationId { throw ProofRejection.challengeWrongCollaboration }
            if let usedBy, usedBy != requestId { throw ProofRejection.challengeUsed }
            if expired { throw ProofRejection.challengeExpired }
        }
        throw ProofRejection.challengeUnknown
    }
}

extension ProofRejection {
    /// A rejection read back from the log by its reason code (message details are not kept).
    static func named(_ reason: String) -> ProofRejection {
        let known: [ProofRejection] = [
            .badSignature, .unknownIdentity, .identityRemoved, .identityClaimed, .challengeUnknown, .challengeExpired,
            .challengeUsed, .challengeWrongAccount, .challengeWrongCollaboration,
        ]
        return known.first { $0.reason == reason } ?? .invalidKey(reason)
    }
}
