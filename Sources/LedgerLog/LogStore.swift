import LedgerPostgres
import Logging
import PostgresNIO
import TransparencyLog

/// The verifiable log as PostgreSQL keeps it: every statement the log runs, and no other
/// type in `LedgerLog` holds one. Tessera's driver for one backend.
///
/// - Here: the tree (`ledger_tree_nodes`, `Migrations/sql/0011`: full subtrees of levels 1
///   and up; level 0, the leaf hashes, from the events themselves) and the checkpointer's
///   lease.
/// - `LogStore+Checkpoints`: signed checkpoints (`ledger_checkpoints`), published ones
///   (`ledger_published_checkpoints`, 0018), the verifier keys, and the floor's records.
/// - `LogStore+Gate`: the head and the standbys' flushed WAL (`ReplicationGate`).
///
/// Reads run on a pooled connection. The checkpointer's statements take the connection that
/// holds its lease (`on:`), so only the lease holder writes the tree and checkpoints.
public struct LogStore: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    // MARK: The lease

    /// Any number serves, as long as it is the same everywhere ("CHKPT").
    static let leaseKey: Int64 = 0x43_484B_5054

    /// Runs `body` on a connection holding the checkpointer's lease (`AdvisoryLease`); returns
    /// at once, without running it, while another session holds the lease.
    func withLease(_ body: (PostgresConnection) async throws -> Void) async throws {
        try await AdvisoryLease(key: Self.leaseKey, client: client, logger: logger).withLease(body)
    }

    // MARK: The tree

    /// A stored event's leaf hash, in SQL: `SHA256(0x00 || ledger_leaf(...))` of the row `e`.
    static let leafHash =
        "sha256('\\x00'::bytea || ledger_leaf(e.position, e.stream_id, e.version, e.event_id, e.event_type, e.data::text, e.metadata::text, e.recorded_at))"

    /// The hashes of `wanted`, in one statement: levels 1 and up from the stored nodes, level 0
    /// (leaf hashes) from the events themselves. A node not stored yet is absent.
    func nodes(_ wanted: [MerkleTree.Node]) async throws -> [MerkleTree.Node: MerkleTree.Hash] {
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

    /// The stored nodes of one level with indexes `from ..< from + count`; nil where none is stored.
    func storedNodes(level: Int, from: Int64, count: Int) async throws -> [MerkleTree.Hash?] {
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
    func leafHashesFromEvents(after: Int64, through: Int64) async throws -> [MerkleTree.Hash] {
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
                    throw CheckpointError(
                        "position \(after + Int64(hashes.count) + 1) is missing from the log (next is \(position)); not signing")
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
    func leaves(after: Int64, through: Int64) async throws -> [[UInt8]] {
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

    /// The size of the stored tree: twice its level-1 nodes, so always even (a last odd leaf
    /// completed no node, and is integrated again).
    func storedTreeSize(on connection: PostgresConnection) async throws -> Int64 {
        var size: Int64 = 0
        for try await pairs in try await connection.queryUnlessClosed(
            "SELECT coalesce(max(index) + 1, 0) FROM ledger_tree_nodes WHERE level = 1", logger: logger
        ).decode(Int64.self) { size = 2 * pairs }
        return size
    }

    /// Stores the nodes an integration completed (`MerkleIntegration.Result`) and the tree's
    /// new edge (`through`, the last event integrated, with its chain hash: `LogStore+Edge`), in
    /// one statement. Nodes derive from the events (one lost in a failover is built again from
    /// them): their commit waits for no standby, so the tree grows while one is away.
    func storeNodes(
        _ nodes: [MerkleTree.Node], hashes: [MerkleTree.Hash], through: Int64, on connection: PostgresConnection
    ) async throws {
        let (levels, indexes) = (nodes.map { Int16($0.level) }, nodes.map(\.index))
        let bytes = hashes.map { ByteBuffer(bytes: $0) }
        try await connection.queryUnlessClosed(
            """
            WITH local AS (SELECT set_config('synchronous_commit', 'local', true)),
            stored AS (
                INSERT INTO ledger_tree_nodes (level, index, hash) SELECT n.* FROM unnest(\(levels), \(indexes), \(bytes)) AS n, local)
            INSERT INTO ledger_tree_edge (size, chain_hash) SELECT e.position, e.hash FROM ledger_events e, local WHERE e.position = \(through)
            ON CONFLICT (id) DO UPDATE SET size = excluded.size, chain_hash = excluded.chain_hash
            """, logger: logger)
    }
}
