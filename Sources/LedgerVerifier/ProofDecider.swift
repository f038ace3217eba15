import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import Logging
import Metrics
import NIOCore
import PostgresNIO
import Synchronization

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
    let idleLimit: Duration
    let hooks: Hooks

    /// Test seams: run inside the decision's transaction.
    public struct Hooks: Sendable {
        /// After the request row is locked, with the decision's connection.
        public var afterLock: (@Sendable (UUID, PostgresConnection) async throws -> Void)?
        /// After the verdict event is in the log, before the request row is marked decided.
        public var afterAppend: (@Sendable (UUID) async throws -> Void)?

        public init(
            afterLock: (@Sendable (UUID, PostgresConnection) async throws -> Void)? = nil,
            afterAppend: (@Sendable (UUID) async throws -> Void)? = nil
        ) {
            self.afterLock = afterLock
            self.afterAppend = afterAppend
        }
    }

    /// `idleLimit`: the server ends a decision's session when it sits idle in its transaction
    /// this long (see `lockRequest`).
    public init(client: PostgresClient, store: any EventStore, logger: Logger, idleLimit: Duration = .seconds(15), hooks: Hooks = Hooks()) {
        self.client = client
        self.collaborations = Collaborations(store: store)
        self.logger = logger
        self.idleLimit = idleLimit
        self.hooks = hooks
    }

    /// Decides one pending request; nil when it is decided already or another decider holds it.
    public func decide(_ requestId: UUID) async throws -> Verdict? {
        // Bounded: a decision stuck on a dead connection is abandoned (rolled back with that
        // connection), and the request, still pending, goes to the next sweep. One stuck on a
        // live connection holds the request's lock until the server ends its session (see
        // `lockRequest`), then the next sweep decides it.
        let progress = Progress()
        do {
            return try await withDeadline(.seconds(30), "deciding proof request \(requestId)") {
                try await client.transaction(logger: logger) { connection in
                    try await decide(requestId, connection, progress)
                }
            }
        } catch var error as DeadlineExceeded {
            error.operation += " (stuck \(progress.step))"
            throw error
        }
    }

    /// Where a decision is: named in the error of one that did not finish in time.
    final class Progress: Sendable {
        private let current = Mutex("waiting for a connection")
        var step: String { current.withLock { $0 } }
        func at(_ step: String) { current.withLock { $0 = step } }
    }

    /// Pending requests, oldest first, that no decider holds right now and no process has
    /// claimed (a `ProofBatcher` claims the requests it stored until its claim lapses).
    public func pending(limit: Int) async throws -> [UUID] {
        try await client.queryUnlessClosed(
            """
            SELECT request_id FROM ledger_proof_requests
            WHERE status = 'pending' AND (claimed_until IS NULL OR claimed_until < now())
            ORDER BY created_at LIMIT \(Int64(limit)) FOR UPDATE SKIP LOCKED
            """, logger: logger
        ) { rows in
            var ids: [UUID] = []
            for try await id in rows.decode(UUID.self) { ids.append(id) }
            return ids
        }
    }

    /// Requests waiting for a verdict (the proof queue depth).
    public func pendingCount() async throws -> Int {
        try await client.queryUnlessClosed("SELECT count(*) FROM ledger_proof_requests WHERE status = 'pending'", logger: logger) { rows in
            for try await n in rows.decode(Int64.self) { return Int(n) }
            return 0
        }
    }

    private struct Request {
        var collaborationId: String
        var account: String
        var challengeId: UUID
        var signature: [UInt8]
        var proof: IdentityProof
    }

    private func decide(_ requestId: UUID, _ connection: PostgresConnection, _ progress: Progress) async throws -> Verdict? {
        progress.at("locking the request")
        guard let request = try await lockRequest(requestId, connection) else { return nil }
        try await hooks.afterLock?(requestId, connection)
        var rejection: ProofRejection?
        var rootHash: RootHash?
        progress.at("consuming the challenge")
        var challenge: [UInt8]?
        do {
            challenge = try await consumeChallenge(request, requestId: requestId, connection)
            rootHash = try request.proof.verify(signature: request.signature, challenge: challenge!)
        } catch let error as ProofRejection {
            rejection = error
        }

        // The verdict, decided on the collaboration's current state.
        progress.at("reading the collaboration and appending the verdict")
        var decided: CollaborationEvent?
        let outcome = try await collaborations.decideAndAppend(request.collaborationId) { state in
            let event = Self.verdictEvent(
                account: request.account, requestId: requestId, challengeId: request.challengeId, proof: request.proof,
                challenge: challenge, signature: request.signature, rootHash: rootHash, rejection: rejection, state: state)
            decided = event
            return .init(
                events: [event], metadata: Self.verdictMetadata(account: request.account, requestId: requestId),
                eventId: Self.verdictEventId(requestId))
        }
        try await hooks.afterAppend?(requestId)
        // The verdict is the event in the log, whichever decider appended it.
        let verdict = try Decided(
            event: outcome.stored.first.map { try CollaborationEvent($0) } ?? decided!, position: outcome.position,
            account: request.account, requestId: requestId, rejection: rejection)
        progress.at("recording the verdict on the request")
        try await connection.queryUnlessClosed(
            """
            WITH decided AS (
                UPDATE ledger_proof_requests
                SET status = \(verdict.status), reason = \(verdict.reason),
                    root_hash = \(verdict.rootHash.map { ByteBuffer(bytes: $0.bytes) }), decided_position = \(verdict.position),
                    decided_at = now(), claimed_until = NULL
                WHERE request_id = \(requestId)
                RETURNING request_id)
            SELECT pg_notify(\(VerifierChannels.verdicts), request_id::text) FROM decided
            """, logger: logger)
        progress.at("committing")
        verdict.count()
        return verdict.verdict
    }

    /// The verdict event of a request: a rejection found by the checks, else the access
    /// decision on the collaboration's state.
    /// A grant records the device's whole proof: `challenge` (the bytes it signed, known
    /// whenever the checks passed) and `signature` as sent.
    static func verdictEvent(
        account: String, requestId: UUID, challengeId: UUID, proof: IdentityProof, challenge: [UInt8]?, signature: [UInt8],
        rootHash: RootHash?, rejection: ProofRejection?, state: CollaborationState
    ) -> CollaborationEvent {
        var reason = rejection
        if reason == nil, let rootHash {
            reason = CollaborationDecisions.decideAccess(state: state, rootHash: rootHash, account: account)
        }
        let requestText = requestId.uuidString.lowercased()
        let challengeText = challengeId.uuidString.lowercased()
        // A verified root hash implies its challenge was read; refuse rather than grant without it.
        if reason == nil && challenge == nil { reason = .challengeUnknown }
        if let reason {
            return .proofRejected(
                .init(
                    account: account, proofRequestId: requestText, challengeId: challengeText, reason: reason.reason, rootHash: rootHash))
        }
        return .accessGranted(
            .init(
                rootHash: rootHash!, account: account, proofRequestId: requestText, challengeId: challengeText, proof: proof,
                challenge: challenge!, signature: signature))
    }

    static func verdictMetadata(account: String, requestId: UUID) -> EventMetadata {
        EventMetadata(actor: account, causationId: requestId.uuidString.lowercased())
    }

    /// The verdict event's id: whichever decider appends a request's verdict, it is this one.
    static func verdictEventId(_ requestId: UUID) -> UUID {
        Identifiers.derivedUUID("verdict\u{0}\(requestId.uuidString.lowercased())")
    }

    /// What a verdict event in the log means for its request: the answer and the row's columns.
    struct Decided: Sendable {
        var requestId: UUID
        var verdict: Verdict
        var status: String
        var reason: String?
        var rootHash: RootHash?
        var position: Int64

        init(event: CollaborationEvent, position: Int64, account: String, requestId: UUID, rejection: ProofRejection?) throws {
            self.requestId = requestId
            self.position = position
            switch event {
            case .accessGranted(let granted):
                status = "granted"
                rootHash = granted.rootHash
                verdict = .granted(rootHash: granted.rootHash.base64, account: account, position: position)
            case .proofRejected(let rejected):
                status = "rejected"
                reason = rejected.reason
                rootHash = rejected.rootHash
                // The checks' own message when they found this reason; the log keeps only the code.
                let message =
                    (rejection?.reason == rejected.reason ? rejection : nil)?.description
                    ?? ProofRejection.named(rejected.reason).description
                verdict = .rejected(reason: rejected.reason, message: message, position: position)
            default:
                throw StoreError.invalidRequest(
                    "verdict event of request \(requestId.uuidString.lowercased()) has an unexpected type")
            }
        }

        /// The same verdict at `position`: a group's verdicts are decided (and their columns
        /// stored) before the commit that gives them their positions.
        func at(_ position: Int64) -> Decided {
            var decided = self
            decided.position = position
            switch verdict {
            case .granted(let rootHash, let account, _): decided.verdict = .granted(rootHash: rootHash, account: account, position: position)
            case .rejected(let reason, let message, _): decided.verdict = .rejected(reason: reason, message: message, position: position)
            case .pending: break
            }
            return decided
        }

        func count() {
            Counter(label: "ledger_proof_verdicts_total", dimensions: [("verdict", reason ?? "granted")]).increment()
        }
    }

    /// Locks the request and, in the same statement, sets `idleLimit` for the transaction: the
    /// server then ends the session of a decider whose client hangs (see `withDeadline`), which
    /// would otherwise hold the request's lock, and every other decider skip it, for as long
    /// as its process lives. A decision waits on its client only for the collaboration's read
    /// and the verdict's append, milliseconds.
    private func lockRequest(_ requestId: UUID, _ connection: PostgresConnection) async throws -> Request? {
        let idle = "\(idleLimit.components.seconds * 1000 + idleLimit.components.attoseconds / 1_000_000_000_000_000)ms"
        let rows = try await connection.queryUnlessClosed(
            """
            SELECT collaboration_id, account, challenge_id, signature, public_key, public_key_index, inclusion_hashes,
                   set_config('idle_in_transaction_session_timeout', \(idle), true)
            FROM ledger_proof_requests WHERE request_id = \(requestId) AND status = 'pending'
            FOR UPDATE SKIP LOCKED
            """, logger: logger)
        for try await (collaboration, account, challengeId, signature, publicKey, index, hashes, _)
            in rows.decode((String, String, UUID, ByteBuffer, ByteBuffer, Int64, [ByteBuffer], String).self)
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
        let consumed = try await connection.queryUnlessClosed(
            """
            UPDATE ledger_challenges SET used_by_request = \(requestId)
            WHERE challenge_id = \(request.challengeId) AND account = \(request.account)
              AND collaboration_id = \(request.collaborationId) AND expires_at >= now()
              AND (used_by_request IS NULL OR used_by_request = \(requestId))
            RETURNING challenge
            """, logger: logger)
        for try await bytes in consumed.decode(ByteBuffer.self) { return Array(buffer: bytes) }
        let rows = try await connection.queryUnlessClosed(
            """
            SELECT collaboration_id, account, expires_at < now(), used_by_request
            FROM ledger_challenges WHERE challenge_id = \(request.challengeId)
            """, logger: logger)
        for try await (collaboration, account, expired, usedBy) in rows.decode((String, String, Bool, UUID?).self) {
            throw Self.challengeRefusal(
                issued: (collaboration, account, expired, usedBy), collaborationId: request.collaborationId, account: request.account,
                requestId: requestId)
        }
        throw ProofRejection.challengeUnknown
    }

    /// Why a request could not consume its challenge, given the challenge's row (nil: none).
    static func challengeRefusal(
        issued: (collaborationId: String, account: String, expired: Bool, usedBy: UUID?)?, collaborationId: String, account: String,
        requestId: UUID
    ) -> ProofRejection {
        guard let issued else { return .challengeUnknown }
        if issued.account != account { return .challengeWrongAccount }
        if issued.collaborationId != collaborationId { return .challengeWrongCollaboration }
        if let usedBy = issued.usedBy, usedBy != requestId { return .challengeUsed }
        if issued.expired { return .challengeExpired }
        return .challengeUnknown
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
