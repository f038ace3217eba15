import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import Logging
import NIOCore
import PostgresNIO

/// The durable side of proofs the API talks to: challenges, stored requests, their status,
/// and waiting for a verdict.
public struct ProofRequests: Sendable {
    let client: PostgresClient
    let logger: Logger
    public var challengeLifetime: TimeInterval

    public init(client: PostgresClient, logger: Logger, challengeLifetime: TimeInterval = 120) {
        self.client = client
        self.logger = logger
        self.challengeLifetime = challengeLifetime
    }

    public struct Challenge: Sendable, Equatable {
        public var challengeId: UUID
        public var challenge: [UInt8]
        public var expiresAt: Date
    }

    /// 32 random bytes bound to the account and collaboration, single use, expiring.
    public func issueChallenge(collaborationId: String, account: String) async throws -> Challenge {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let challengeId = UUID()
        let expires = Date().addingTimeInterval(challengeLifetime)
        let micros = Int64(expires.timeIntervalSince1970 * 1_000_000)
        // In a transaction: the challenge is answered to the caller (see `PostgresClient.transaction`).
        try await client.transaction(logger: logger) { connection in
            _ = try await connection.queryUnlessClosed(
                """
                INSERT INTO ledger_challenges (challenge_id, collaboration_id, account, challenge, expires_at)
                VALUES (\(challengeId), \(collaborationId), \(account), \(ByteBuffer(bytes: bytes)),
                        to_timestamp(\(micros)::float8 / 1000000))
                """, logger: logger)
        }
        return Challenge(challengeId: challengeId, challenge: bytes, expiresAt: expires)
    }

    /// Stores requests for the verifier workers and tells them (the NOTIFY is delivered at
    /// commit). Answered after the commit: a caller may then promise the requests' ids.
    public func store(_ submissions: [ProofSubmission]) async throws {
        let proofs = submissions.map(\.proof)
        try await client.transaction(logger: logger) { connection in
            _ = try await connection.queryUnlessClosed(
                """
                WITH stored AS (
                    INSERT INTO ledger_proof_requests
                        (request_id, collaboration_id, account, challenge_id, signature, public_key, public_key_index, inclusion_hashes)
                    SELECT request_id, collaboration_id, account, challenge_id, signature, public_key, public_key_index,
                           ARRAY(SELECT decode(h, 'base64') FROM json_array_elements_text(hashes::json) WITH ORDINALITY AS e(h, n) ORDER BY n)
                    FROM unnest(\(submissions.map(\.requestId))::uuid[], \(submissions.map(\.collaborationId))::text[],
                                \(submissions.map(\.account))::text[], \(submissions.map(\.challengeId))::uuid[],
                                \(submissions.map { ByteBuffer(bytes: $0.signature) })::bytea[],
                                \(proofs.map { ByteBuffer(bytes: $0.publicKey) })::bytea[], \(proofs.map { Int64($0.publicKeyIndex) })::int8[],
                                \(proofs.map(Self.hashesJSON))::text[])
                        AS i(request_id, collaboration_id, account, challenge_id, signature, public_key, public_key_index, hashes)
                    RETURNING request_id)
                SELECT pg_notify(\(VerifierChannels.requests), request_id::text) FROM stored
                """, logger: logger)
        }
    }

    /// A proof's inclusion hashes as one JSON array of base64 strings: PostgreSQL takes no
    /// two-dimensional array of unequal rows, so each request's path travels as text.
    static func hashesJSON(_ proof: IdentityProof) -> String {
        "[" + proof.inclusionHashes.map { "\"\(Base64.encode($0))\"" }.joined(separator: ",") + "]"
    }

    /// The request's verdict, or `.pending`; nil for a request unknown to this account.
    public func status(requestId: UUID, account: String) async throws -> Verdict? {
        try await client.queryUnlessClosed(
            """
            SELECT account, status, reason, root_hash, decided_position FROM ledger_proof_requests WHERE request_id = \(requestId)
            """, logger: logger
        ) { rows in
            for try await (owner, status, reason, rootHash, position) in rows.decode((String, String, String?, ByteBuffer?, Int64?).self) {
                guard owner == account else { return nil }
                switch status {
                case "granted":
                    return .granted(rootHash: Base64.encode(Array(buffer: rootHash!)), account: owner, position: position!)
                case "rejected":
                    let reason = reason ?? "rejected"
                    return .rejected(reason: reason, message: ProofRejection.named(reason).description, position: position)
                default:
                    return .pending(requestId: requestId)
                }
            }
            return nil
        }
    }

    /// Waits up to `timeout` for a verdict, woken by the verdict NOTIFY (and re-checking every
    /// 500 ms in case one was missed while the LISTEN connection was down).
    public func awaitVerdict(requestId: UUID, account: String, verdicts: NotificationHub, timeout: Duration) async throws -> Verdict {
        let subscription = verdicts.register(payload: requestId.uuidString.lowercased())
        defer { subscription.cancel() }
        let deadline = ContinuousClock.now + timeout
        while true {
            if let verdict = try await status(requestId: requestId, account: account), verdict != .pending(requestId: requestId) {
                return verdict
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return .pending(requestId: requestId) }
            await subscription.wait(timeout: min(left, .milliseconds(500)))
        }
    }
}
