import LedgerPostgres
import Logging
import Metrics
import PostgresNIO
import TransparencyLog

extension Checkpointer {
    /// With witnesses: the latest signed checkpoint, if newer than the latest published, sent to
    /// them (it is in the file and the database already: `sign`); published with their
    /// cosignatures once they meet the quorum. A round that does not leaves it unpublished
    /// (served nowhere) and is tried again within a second, or with the next, larger checkpoint.
    /// A witness that holds a tree the checkpoint does not extend (a 422, or a 409 past its
    /// size) is a `ForkRefusal`: not published, whatever the quorum.
    ///
    /// A checkpoint goes to the witnesses only once the record of its signature is where a
    /// failover or a restore would find it: the WAL of its `ledger_checkpoints` row flushed by
    /// every standby and backup `ReplicationGate` counts. A witness's size is part of the floor,
    /// and a floor above every checkpoint the database records cannot be checked (its root is
    /// lost): the log could never sign again. Returns true while it waits for them.
    func publish(_ connection: PostgresConnection, _ sending: inout Sending?) async throws -> Bool {
        guard let witnesses else { return false }
        guard let (size, note) = try await store.unpublished(on: connection) else { return false }
        // The WAL read now covers the row, committed before it was read.
        if sending?.size != size { sending = Sending(size: size, wal: try await gate.head(connection).wal) }
        if let flushed = try await gate.replicated(connection), flushed < sending!.wal { return true }
        let (text, _) = try SignedNote.parse(note)
        let round = await witnesses.cosignatures(of: note, checkpoint: try Checkpoint(text: text), text: text)
        if let (name, why) = round.contradictions.min(by: { $0.key < $1.key }) {
            throw ForkRefusal.refuse(
                "witness \(name) holds a tree the checkpoint of \(size) does not extend (\(why)); not publishing it",
                log: signer.name, logger: logger, metadata: ["size": "\(size)", "witness": "\(name)"])
        }
        guard witnesses.policy.isMet(by: Set(round.lines.keys)) else {
            logger.warning(
                "checkpoint not published: the witnesses' quorum did not cosign it",
                metadata: ["size": "\(size)", "cosigned by": "\(round.lines.keys.sorted())"])
            return false
        }
        let published = note + round.lines.keys.sorted().map { round.lines[$0]! }.joined()
        try file?.write(published)
        try await store.recordPublished(size: size, note: published, on: connection)
        ShardMetrics.gauge("ledger_checkpoint_published_size", logger).record(size)
        return false
    }

    /// A signed checkpoint waiting to be sent, and the WAL position that covers its record.
    struct Sending {
        var size: Int64
        var wal: Int64
    }
}
