import Foundation
import LedgerDomain
import LedgerStore
import TransparencyLog
import LedgerPostgres
import Logging
import PostgresNIO

/// The log's Merkle tree and signed checkpoints as PostgreSQL keeps them
/// (`Migrations/sql/0011_verifiable_log.sql`, `0018`): full subtree nodes, written by the
/// checkpointer, read back for proofs; one checkpoint per signed tree size, served once published.
public struct LogTree: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// A published checkpoint as stored.
    public struct StoredCheckpoint: Sendable, Equatable {
        public var size: Int64
        public var rootHash: [UInt8]
        /// The signed note as published: the log's signature, then any witnesses' cosignatures.
        public var note: String
        public var publishedAt: Date
    }

    // MARK: Proofs

    /// The hashes of `ranges` (each a range the RFC's recursion names), from one lookup of
    /// the nodes under them. Throws if a node is missing (the tree is behind).
    public func hashes(of ranges: [Range<Int64>]) async throws -> [MerkleTree.Hash] {
        let stored = try await nodes(Array(Set(ranges.flatMap(MerkleTree.nodes(covering:)))))
        return try ranges.map { range in
            guard let hash = MerkleTree.hash(of: range, node: { stored[$0] }) else {
                throw StoreError.invalidRequest("the tree has no nodes for leaves \(range) yet")
            }
            return hash
        }
    }

    /// The hashes of `wanted`, in one statement: levels 1 and up from the stored nodes, level 0
    /// (leaf hashes) from the events themselves.
    public func nodes(_ wanted: [MerkleTree.Node]) async throws -> [MerkleTree.Node: MerkleTree.Hash] {
        let (leaves, inner) = (wanted.filter { $0.level == 0 }, wanted.filter { $0.level > 0 })
        return try await client.queryUnlessClosed(
            """
            SELECT n.level, n.index, n.hash FROM ledger_tree_nodes n
            JOIN unnest(\(inner.map { Int16($0.level) }), \(inner.map(\.index))) AS w(level, index)
              ON n.level = w.level AND n.index = w.index
            UNION ALL
            SELECT 0::int2, e.position - 1, \(unescaped: Self.leafHash) FROM ledger_events e
            WHERE e.position = ANY(\(leaves.map { $0.index + 1 }))
            """, logger: logger
        ) { rows in
            var nodes: [MerkleTree.Node: MerkleTree.Hash] = [:]
            for try await (level, index, hash) in rows.decode((Int16, Int64, ByteBuffer).self) {
                nodes[MerkleTree.Node(level: Int(level), index: index)] = Array(buffer: hash)
            }
            return nodes
        }
    }

    /// A stored event's leaf hash, in SQL: `SHA256(0x00 || ledger_leaf(...))` of the row `e`.
    static let leafHash =
        "sha256('\\x00'::bytea || ledger_leaf(e.position, e.stream_id, e.version, e.event_id, e.event_type, e.data::text, e.metadata::text, e.recorded_at))"

    /// The leaf hash of the event at `position` and its inclusion proof in the tree of `size`.
    public func inclusionProof(position: Int64, size: Int64) async throws -> (leafHash: MerkleTree.Hash, hashes: [MerkleTree.Hash]) {
        let leaf = position - 1
        let all = try await hashes(of: [leaf ..< position] + MerkleTree.inclusionRanges(leaf: leaf, size: size))
        return (all[0], Array(all.dropFirst()))
    }

    public func consistencyProof(from: Int64, to: Int64) async throws -> [MerkleTree.Hash] {
        try await hashes(of: MerkleTree.consistencyRanges(from: from, to: to))
    }

    /// The stored nodes of one level with indexes `from ..< from + count`; nil where none is stored.
    public func storedNodes(level: Int, from: Int64, count: Int) async throws -> [MerkleTree.Hash?] {
        try await client.queryUnlessClosed(
            """
            SELECT index, hash FROM ledger_tree_nodes
            WHERE level = \(Int16(level)) AND index >= \(from) AND index < \(from + Int64(count))
            """, logger: logger
        ) { rows in
            var hashes = [MerkleTree.Hash?](repeating: nil, count: count)
            for try await (index, hash) in rows.decode((Int64, ByteBuffer).self) { hashes[Int(index - from)] = Array(buffer: hash) }
            return hashes
        }
    }

    /// The leaf hashes of the events at positions `after + 1 ... through`, computed by
    /// PostgreSQL from the stored events (`ledger_leaf`). Throws unless every position is there.
    public func leafHashesFromEvents(after: Int64, through: Int64) async throws -> [MerkleTree.Hash] {
        try await client.queryUnlessClosed(
            """
            SELECT e.position, \(unescaped: Self.leafHash)
            FROM ledger_events e WHERE e.position > \(after) AND e.position <= \(through) ORDER BY e.position
            """, logger: logger
        ) { rows in
            var hashes: [MerkleTree.Hash] = []
            hashes.reserveCapacity(Int(through - after))
            for try await (position, hash) in rows.decode((Int64, ByteBuffer).self) {
                guard position == after + Int64(hashes.count) + 1 else {
                    throw CheckpointError("position \(after + Int64(hashes.count) + 1) is missing from the log (next is \(position)); not signing")
                }
                hashes.append(Array(buffer: hash))
            }
            guard hashes.count == Int(through - after) else {
                throw CheckpointError("the log ends at position \(after + Int64(hashes.count)), before \(through); not signing")
            }
            return hashes
        }
    }

    /// The leaves (canonical bytes, `ledger_leaf`) of the events at positions `after + 1 ...
    /// through`, in order; throws unless every position is there.
    public func leaves(after: Int64, through: Int64) async throws -> [[UInt8]] {
        try await client.queryUnlessClosed(
            """
            SELECT ledger_leaf(e.position, e.stream_id, e.version, e.event_id, e.event_type, e.data::text, e.metadata::text, e.recorded_at)
            FROM ledger_events e WHERE e.position > \(after) AND e.position <= \(through) ORDER BY e.position
            """, logger: logger
        ) { rows in
            var leaves: [[UInt8]] = []
            for try await leaf in rows.decode(ByteBuffer.self) { leaves.append(Array(buffer: leaf)) }
            guard leaves.count == Int(through - after) else {
                throw CheckpointError("the log holds \(leaves.count) of the events \(after + 1) through \(through)")
            }
            return leaves
        }
    }

    // MARK: Checkpoints

    /// The latest published checkpoint (Migrations/sql/0018): the only kind served anywhere.
    public func latestCheckpoint() async throws -> StoredCheckpoint? {
        try await checkpoints(
            """
            SELECT p.tree_size, c.root_hash, p.note, (extract(epoch FROM p.published_at) * 1000000)::int8
            FROM ledger_published_checkpoints p JOIN ledger_checkpoints c USING (tree_size) ORDER BY p.tree_size DESC LIMIT 1
            """)
    }

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

    public func checkpoint(size: Int64) async throws -> StoredCheckpoint? {
        try await checkpoints(
            """
            SELECT p.tree_size, c.root_hash, p.note, (extract(epoch FROM p.published_at) * 1000000)::int8
            FROM ledger_published_checkpoints p JOIN ledger_checkpoints c USING (tree_size) WHERE p.tree_size = \(size)
            """)
    }

    /// Waits until a checkpoint of at least `size` is signed (polling every 20 ms); throws
    /// `CheckpointError` after `timeout` (no checkpointer running, or one that stopped).
    public func checkpoint(atLeast size: Int64, within timeout: Duration) async throws -> StoredCheckpoint {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let latest = try await latestCheckpoint(), latest.size >= size { return latest }
            guard ContinuousClock.now < deadline else { throw CheckpointError("no checkpoint of size \(size) or more within \(timeout)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The log's head, when the latest published checkpoint was signed, and the age of the oldest
    /// event it does not cover yet (0 when it covers them all).
    public func status() async throws -> (head: Int64, signedAt: Date?, lagSeconds: Double) {
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
    public func verifierKey() async throws -> String? {
        try await client.queryUnlessClosed(
            "SELECT verifier_key FROM ledger_log_keys ORDER BY added_at DESC, verifier_key LIMIT 1", logger: logger
        ) { rows in
            for try await key in rows.decode(String.self) { return key }
            return nil
        }
    }

    private func checkpoints(_ query: PostgresQuery) async throws -> StoredCheckpoint? {
        try await client.queryUnlessClosed(query, logger: logger) { rows in
            for try await (size, root, note, micros) in rows.decode((Int64, ByteBuffer, String, Int64).self) {
                return StoredCheckpoint(
                    size: size, rootHash: Array(buffer: root), note: note, publishedAt: Date(timeIntervalSince1970: Double(micros) / 1e6))
            }
            return nil
        }
    }
}
