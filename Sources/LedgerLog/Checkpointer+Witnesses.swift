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
    func publish(_ connection: PostgresConnection) async throws {
        guard let witnesses else { return }
        guard let (size, note) = try await store.unpublished(on: connection) else { return }
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
            return
        }
        let published = note + round.lines.keys.sorted().map { round.lines[$0]! }.joined()
        try file?.write(published)
        try await store.recordPublished(size: size, note: published, on: connection)
        Gauge(label: "ledger_checkpoint_published_size").record(size)
    }
}
