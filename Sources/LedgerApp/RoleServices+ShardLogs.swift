import LedgerDomain
import LedgerLog
import TransparencyLog

/// The signers of `serve`'s logs. On one database, its log's: the deployment's key and origin,
/// through the deployment's witnesses. On several shards, each shard's log is signed with the
/// deployment's key (`NoteSigner.renamed`) under the shard's origin, the deployment's with
/// `/shard/k` appended (`example.com/ledger/shard/0`), and the top log, which records them, is
/// the deployment's origin, witnessed.
extension RoleServices {
    public struct ShardLogs: Sendable {
        public var shards: [NoteSigner]
        public var shardWitnesses: WitnessPolicy?
        /// The top log's signer, on several shards.
        public var top: NoteSigner?
        public var topWitnesses: WitnessPolicy?

        /// One database's log.
        public init(single signer: NoteSigner, witnesses: WitnessPolicy? = nil) {
            (shards, shardWitnesses, top, topWitnesses) = ([signer], witnesses, nil, nil)
        }

        /// `count` shards' logs and the top log.
        public init(signer: NoteSigner, witnesses: WitnessPolicy? = nil, count: Int) throws {
            (top, topWitnesses, shardWitnesses) = (signer, witnesses, nil)
            shards = try (0..<count).map { try signer.renamed(ShardCheckpointRecorded.origin(shard: $0, top: signer.name)) }
        }
    }
}
