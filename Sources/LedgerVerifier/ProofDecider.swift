import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// The worker path: decides stored proof requests, each exactly once.
///
/// One decision is one transaction on the request row: lock it (`FOR UPDATE SKIP LOCKED`, so
/// deciders never wait on each other and never decide the same request twice at once), lock
/// its challenge, check (`ProofVerdict.check`), consume the challenge, append the verdict
/// decided on the collaboration's current state (`ProofVerdict.event`, re-decided if the
/// collaboration changes before the append), mark the request decided and NOTIFY. A decider
/// that dies before its commit leaves the request pending and the challenge unused (the
/// transaction rolls back); one that dies after appending the verdict leaves a request whose
/// next decider meets the stored verdict (same event id) and records that one, not a second.
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

    /// Pending requests, oldest first, that no decider holds right now.
    public func pending(limit: Int) async throws -> [UUID] {
        try await client.queryUnlessClosed(
            """
            SELECT request_id FROM ledger_proof_requests WHERE status = 'pending'
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

    private func decide(_ requestId: UUID, _ connection: PostgresConnection, _ progress: Progress) async throws -> Verdict? {
        progress.at("locking the request")
        guard let submission = try await lockRequest(requestId, connection) else { return nil }
        try await hooks.afterLock?(requestId, connection)
        progress.at("locking the challenge")
        let checked = ProofVerdict.check(submission, challenge: try await lockChallenge(submission.challengeId, connection))
        if checked.consumesChallenge {
            _ = try await connection.queryUnlessClosed(
                "UPDATE ledger_challenges SET used_by_request = \(requestId) WHERE challenge_id = \(submission.challengeId)",
                logger: logger)
        }

        progress.at("reading the collaboration and appending the verdict")
        let outcome = try await collaborations.decideAndAppend(submission.collaborationId) { state in
            let event = ProofVerdict.event(checked, state: state)
            return .init(events: [event], metadata: ProofVerdict.metadata(submission), eventId: ProofVerdict.eventId(requestId))
        }
        try await hooks.afterAppend?(requestId)
        // The verdict is the event in the log, whichever decider appended it.
        guard let event = try outcome.stored.first.map(CollaborationEvent.init) ?? outcome.events.first else {
            throw VerdictEventError(type: "none")
        }
        let verdict = try Verdict(event: event, position: outcome.position, rejection: checked.rejection)
        let columns = Verdict.columns(of: event)
        progress.at("recording the verdict on the request")
        try await connection.queryUnlessClosed(
            """
            WITH decided AS (
                UPDATE ledger_proof_requests
                SET status = \(columns.status), reason = \(columns.reason),
                    root_hash = \(columns.rootHash.map { ByteBuffer(bytes: $0.bytes) }), decided_position = \(outcome.position),
                    decided_at = now()
                WHERE request_id = \(requestId)
                RETURNING request_id)
            SELECT pg_notify(\(VerifierChannels.verdicts), request_id::text) FROM decided
            """, logger: logger)
        progress.at("committing")
        verdict.count()
        return verdict
    }

    /// Locks the request and, in the same statement, sets `idleLimit` for the transaction: the
    /// server then ends the session of a decider whose client hangs (see `withDeadline`), which
    /// would otherwise hold the request's lock, and every other decider skip it, for as long
    /// as its process lives. A decision waits on its client only for the collaboration's read
    /// and the verdict's append, milliseconds.
    private func lockRequest(_ requestId: UUID, _ connection: PostgresConnection) async throws -> ProofSubmission? {
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
            return ProofSubmission(
                requestId: requestId, collaborationId: collaboration, account: account, challengeId: challengeId,
                signature: Array(buffer: signature),
                proof: IdentityProof(
                    publicKey: Array(buffer: publicKey), publicKeyIndex: UInt64(index), inclusionHashes: hashes.map { Array(buffer: $0) }))
        }
        return nil
    }

    /// The challenge, locked until the decision commits (nil: never issued).
    private func lockChallenge(_ challengeId: UUID, _ connection: PostgresConnection) async throws -> IssuedChallenge? {
        let rows = try await connection.queryUnlessClosed(
            """
            SELECT challenge, collaboration_id, account, expires_at < now(), used_by_request
            FROM ledger_challenges WHERE challenge_id = \(challengeId) FOR UPDATE
            """, logger: logger)
        for try await (bytes, collaboration, account, expired, usedBy) in rows.decode((ByteBuffer, String, String, Bool, UUID?).self) {
            return IssuedChallenge(bytes: Array(buffer: bytes), collaborationId: collaboration, account: account, expired: expired, usedBy: usedBy)
        }
        return nil
    }
}
