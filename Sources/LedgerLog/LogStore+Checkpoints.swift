import Foundation
import LedgerPostgres
import Logging
import PostgresNIO
import TransparencyLog

/// Checkpoints as PostgreSQL keeps them: every signed one (`ledger_checkpoints`, one per tree
/// size, 0011), the published ones, the only kind served anywhere (`ledger_published_checkpoints`,
/// 0018: the note with the witnesses' cosignatures), and the keys the checkpointer signed with
/// (`ledger_log_keys`).
extension LogStore {
    /// A published checkpoint as stored.
    public struct StoredCheckpoint: Sendable, Equatable {
        public var size: Int64
        public var rootHash: [UInt8]
        /// The signed note as published: the log's signature, then any witnesses' cosignatures.
        public var note: String
        public var publishedAt: Date
    }

    // MARK: Served

    /// The latest published checkpoint; nil when none is.
    func latestPublished() async throws -> StoredCheckpoint? {
        try await readPublished(
            """
            SELECT p.tree_size, c.root_hash, p.note, (extract(epoch FROM p.published_at) * 1000000)::int8
            FROM ledger_published_checkpoints p JOIN ledger_checkpoints c USING (tree_size) ORDER BY p.tree_size DESC LIMIT 1
            """)
    }

    /// The published checkpoint of `size`; nil when none is.
    func published(size: Int64) async throws -> StoredCheckpoint? {
        try await readPublished(
            """
            SELECT p.tree_size, c.root_hash, p.note, (extract(epoch FROM p.published_at) * 1000000)::int8
            FROM ledger_published_checkpoints p JOIN ledger_checkpoints c USING (tree_size) WHERE p.tree_size = \(size)
            """)
    }

    private func readPublished(_ query: PostgresQuery) async throws -> StoredCheckpoint? {
        try await client.queryUnlessClosed(query, logger: logger) { rows in
            for try await (size, root, note, micros) in rows.decode((Int64, ByteBuffer, String, Int64).self) {
                return StoredCheckpoint(
                    size: size, rootHash: Array(buffer: root), note: note, publishedAt: Date(timeIntervalSince1970: Double(micros) / 1e6))
            }
            return nil
        }
    }

    /// The log's head, when the latest published checkpoint was signed, and the age of the oldest
    /// event it does not cover yet (0 when it covers them all).
    func status() async throws -> (head: Int64, signedAt: Date?, lagSeconds: Double) {
        try await client.queryUnlessClosed(
            """
            WITH p AS (SELECT tree_size FROM ledger_published_checkpoints ORDER BY tree_size DESC LIMIT 1)
            SELECT h.position, (SELECT (extract(epoch FROM c.signed_at) * 1000000)::int8 FROM ledger_checkpoints c, p WHERE c.tree_size = p.tree_size),
                   coalesce(extract(epoch FROM now() - (SELECT e.recorded_at FROM ledger_events e
                       WHERE e.position = coalesce((SELECT tree_size FROM p), 0) + 1)), 0)::float8
            FROM ledger_head h
            """, logger: logger
        ) { rows in
            for try await (head, micros, lag) in rows.decode((Int64, Int64?, Double).self) {
                return (head, micros.map { Date(timeIntervalSince1970: Double($0) / 1e6) }, lag)
            }
            throw CheckpointError("ledger_head row missing: run migrations")
        }
    }

    /// The newest verifier key the checkpointer has signed with.
    func verifierKey() async throws -> String? {
        try await client.queryUnlessClosed(
            "SELECT verifier_key FROM ledger_log_keys ORDER BY added_at DESC, verifier_key LIMIT 1", logger: logger
        ) { rows in
            for try await key in rows.decode(String.self) { return key }
            return nil
        }
    }

    // MARK: The floor's records

    /// The database's records for the checkpointer's floor (`CheckpointFloor`): its latest
    /// published checkpoint and its latest signed one (the same row twice when it is both),
    /// each as size and root. Every checkpoint is signed and stored before it is sent to a
    /// witness, so the latest signed covers any a witness may hold; it is served nowhere.
    func latestRecorded() async throws -> [(size: Int64, root: MerkleTree.Hash, published: Bool)] {
        try await client.queryUnlessClosed(
            """
            (SELECT c.tree_size, c.root_hash, true FROM ledger_published_checkpoints p JOIN ledger_checkpoints c USING (tree_size)
             ORDER BY c.tree_size DESC LIMIT 1)
            UNION ALL
            (SELECT tree_size, root_hash, false FROM ledger_checkpoints ORDER BY tree_size DESC LIMIT 1)
            """, logger: logger
        ) { rows in
            var records: [(size: Int64, root: MerkleTree.Hash, published: Bool)] = []
            for try await (size, root, published) in rows.decode((Int64, ByteBuffer, Bool).self) {
                records.append((size, Array(buffer: root), published))
            }
            return records
        }
    }

    // MARK: The checkpointer's, on its lease

    /// Records `key` among the keys the log has signed with (kept if it is there).
    func recordVerifierKey(_ key: String, on connection: PostgresConnection) async throws {
        try await connection.queryUnlessClosed(
            "INSERT INTO ledger_log_keys (verifier_key) VALUES (\(key)) ON CONFLICT DO NOTHING", logger: logger)
    }

    /// The root of the signed checkpoint of `size`; nil when none is signed.
    func signedRoot(size: Int64, on connection: PostgresConnection) async throws -> MerkleTree.Hash? {
        var found: MerkleTree.Hash?
        for try await root in try await connection.queryUnlessClosed(
            "SELECT root_hash FROM ledger_checkpoints WHERE tree_size = \(size)", logger: logger
        ).decode(ByteBuffer.self) { found = Array(buffer: root) }
        return found
    }

    /// Stores the signed checkpoint `note` of `size` and `root` unless one of that size is
    /// stored; `publishing`, published in the same statement (a log without witnesses). True
    /// if it was stored.
    func storeSigned(
        size: Int64, root: MerkleTree.Hash, note: String, publishing: Bool, on connection: PostgresConnection
    ) async throws -> Bool {
        let rows = try await connection.queryUnlessClosed(
            """
            WITH signed AS (
                INSERT INTO ledger_checkpoints (tree_size, root_hash, note)
                VALUES (\(size), \(ByteBuffer(bytes: root)), \(note)) ON CONFLICT (tree_size) DO NOTHING
                RETURNING tree_size, note),
            published AS (
                INSERT INTO ledger_published_checkpoints (tree_size, note) SELECT tree_size, note FROM signed WHERE \(publishing)
                RETURNING tree_size)
            SELECT tree_size FROM signed
            """, logger: logger)
        var stored = false
        for try await _ in rows.decode(Int64.self) { stored = true }
        return stored
    }

    /// The latest signed checkpoint if it is newer than the latest published: its size and
    /// note (the log's signature alone); nil when there is none.
    func unpublished(on connection: PostgresConnection) async throws -> (size: Int64, note: String)? {
        var pending: (size: Int64, note: String)?
        for try await (size, note) in try await connection.queryUnlessClosed(
            """
            SELECT c.tree_size, c.note FROM ledger_checkpoints c
            WHERE c.tree_size > (SELECT coalesce(max(tree_size), -1) FROM ledger_published_checkpoints)
            ORDER BY c.tree_size DESC LIMIT 1
            """, logger: logger
        ).decode((Int64, String).self) { pending = (size, note) }
        return pending
    }

    /// Publishes the checkpoint of `size` as `note` (with the witnesses' cosignatures); kept
    /// as it is if it was published already.
    func recordPublished(size: Int64, note: String, on connection: PostgresConnection) async throws {
        try await connection.queryUnlessClosed(
            "INSERT INTO ledger_published_checkpoints (tree_size, note) VALUES (\(size), \(note)) ON CONFLICT DO NOTHING",
            logger: logger)
    }
}
