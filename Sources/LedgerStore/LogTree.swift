import Foundation
import LedgerDomain
import Logging
import PostgresNIO

/// The log's Merkle tree and signed checkpoints as PostgreSQL keeps them
/// (`Migrations/sql/0011_verifiable_log.sql`): full subtree nodes, written by the
/// checkpointer, read back for proofs; one checkpoint per signed tree size.
public struct LogTree: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// A signed checkpoint as stored.
    public struct StoredCheckpoint: Sendable, Equatable {
        public var size: Int64
        public var rootHash: [UInt8]
        /// The signed note, exactly as signed.
        public var note: String
    }

    // MARK: Proofs

    /// The hashes of `ranges` (each a range the RFC's recursion names), from one lookup of
    /// the stored nodes under them. Throws if a node is missing (the tree is behind).
    public func hashes(of ranges: [Range<Int64>]) async throws -> [MerkleTree.Hash] {
        let wanted = Array(Set(ranges.flatMap(MerkleTree.nodes(covering:))))
        let stored = try await client.queryUnlessClosed(
            """
            SELECT n.level, n.index, n.hash FROM ledger_tree_nodes n
            JOIN unnest(\(wanted.map { Int16($0.level) }), \(wanted.map(\.index))) AS w(level, index)
              ON n.level = w.level AND n.index = w.index
            """, logger: logger
        ) { rows in
            var nodes: [MerkleTree.Node: MerkleTree.Hash] = [:]
            for try await (level, index, hash) in rows.decode((Int16, Int64, ByteBuffer).self) {
                nodes[MerkleTree.Node(level: Int(level), index: index)] = Array(buffer: hash)
            }
            return nodes
        }
        return try ranges.map { range in
            guard let hash = MerkleTree.hash(of: range, node: { stored[$0] }) else {
                throw StoreError.invalidRequest("the tree has no nodes for leaves \(range) yet")
            }
            return hash
        }
    }

    /// The leaf hash of the event at `position` and its inclusion proof in the tree of `size`.
    public func inclusionProof(position: Int64, size: Int64) async throws -> (leafHash: MerkleTree.Hash, hashes: [MerkleTree.Hash]) {
        let leaf = position - 1
        let all = try await hashes(of: [leaf ..< position] + MerkleTree.inclusionRanges(leaf: leaf, size: size))
        return (all[0], Array(all.dropFirst()))
    }

    public func consistencyProof(from: Int64, to: Int64) async throws -> [MerkleTree.Hash] {
        try await hashes(of: MerkleTree.consistencyRanges(from: from, to: to))
    }

    /// The stored leaf hashes (level-0 nodes) of `count` positions from `from`; nil where
    /// the tree has none.
    public func leafHashes(from: Int64, count: Int) async throws -> [MerkleTree.Hash?] {
        try await client.queryUnlessClosed(
            """
            SELECT index, hash FROM ledger_tree_nodes
            WHERE level = 0 AND index >= \(from - 1) AND index < \(from - 1 + Int64(count))
            """, logger: logger
        ) { rows in
            var hashes = [MerkleTree.Hash?](repeating: nil, count: count)
            for try await (index, hash) in rows.decode((Int64, ByteBuffer).self) { hashes[Int(index - (from - 1))] = Array(buffer: hash) }
            return hashes
        }
    }

    // MARK: Checkpoints

    public func latestCheckpoint() async throws -> StoredCheckpoint? {
        try await checkpoints("SELECT tree_size, root_hash, note FROM ledger_checkpoints ORDER BY tree_size DESC LIMIT 1")
    }

    public func checkpoint(size: Int64) async throws -> StoredCheckpoint? {
        try await checkpoints("SELECT tree_size, root_hash, note FROM ledger_checkpoints WHERE tree_size = \(size)")
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
            for try await (size, root, note) in rows.decode((Int64, ByteBuffer, String).self) {
                return StoredCheckpoint(size: size, rootHash: Array(buffer: root), note: note)
            }
            return nil
        }
    }
}
