import Foundation
import Logging
import TransparencyLog

/// What the checkpointer must never contradict (SPEC "Backups and recovery": the checkpointer's
/// floor never fails open). Before it signs a tree, the tree must extend every record of a
/// checkpoint this log has signed, sent or published:
///
/// - the checkpoint in the file (`CheckpointFile`, `LEDGER_CHECKPOINT_FILE`);
/// - the database's latest published checkpoint, and its latest signed one (every checkpoint
///   is stored when signed, before it is sent to a witness, so a checkpoint a witness may have
///   cosigned without a quorum is in it, though published nowhere);
/// - with witnesses, the size each one holds, as its answers said (a 409 names it).
///
/// A missing file is not a clean slate: the other records still hold. A file that cannot be
/// read, or that holds another log's checkpoint, is refused. "Extends" is proved, not assumed:
/// a consistency proof from the record's size to the tree's, from the stored tree, verified by
/// the RFC 9162 verifier against the record's root and the root about to be signed
/// (`TreeExtension`). A witness's size comes without its root; a tree at least that large
/// passes only where a record here covers that size (the witness itself then checks the
/// proof it is sent, and a 422 stops publication): a witness that holds more than every record
/// here means records were lost, and nothing is signed until a copy of such a checkpoint is
/// put back in the file.
///
/// Each refusal names what is missing or different, is logged and counted (`ForkRefusal`).
struct CheckpointFloor {
    let file: CheckpointFile?
    let tree: LogTree
    let origin: String
    let logger: Logger

    /// One record the tree must extend: a size, its root where known, and where it comes from.
    struct Bound: Equatable {
        var size: Int64
        /// Nil for a witness's size: a 409 says the size alone.
        var root: MerkleTree.Hash?
        /// Names the record in a refusal: "the checkpoint in FILE", "witness W1", …
        var source: String
    }

    /// Throws a `ForkRefusal` unless the tree of `size` with `root` extends every record;
    /// `witnessSizes` are the sizes the witnesses said they hold, by name; `unknown`, the
    /// witnesses that have not said yet (unreachable). With the file missing, an unknown witness
    /// may hold the only record of a larger checkpoint: nothing is signed until it answers.
    func check(size: Int64, root: MerkleTree.Hash, witnessSizes: [String: Int64], unknown: [String] = []) async throws {
        if !unknown.isEmpty, (try? file?.checkpoint()) ?? nil == nil {
            throw ForkRefusal.refuse(
                "the checkpoint file is missing and \(unknown.sorted().joined(separator: ", ")) did not say what size it holds (unreachable): it may hold the only record of a larger checkpoint; nothing is signed until it answers",
                log: origin, logger: logger, metadata: ["tree": "\(size)"])
        }
        let records = try await bounds(witnessSizes: witnessSizes)
        let recorded = records.filter { $0.root != nil }.map(\.size).max() ?? 0
        // Largest first: a shorter log is told the whole range it lacks.
        for bound in records.sorted(by: { $0.size > $1.size }) {
            let verdict: TreeExtension.Verdict
            if let boundRoot = bound.root {
                // From the stored tree: the nodes and events the tree about to be signed is built from.
                var proof: [MerkleTree.Hash] = []
                if size > bound.size, bound.size > 0 { proof = try await tree.consistencyProof(from: bound.size, to: size) }
                verdict = TreeExtension.check(earlierSize: bound.size, earlierRoot: boundRoot, size: size, root: root, proof: proof)
            } else if size < bound.size {
                verdict = .shorter(missing: (size + 1)...bound.size)
            } else if bound.size > recorded {
                verdict = .differs(
                    "more than any checkpoint recorded here (\(recorded) events): records of checkpoints this log "
                        + "signed are lost, and without the root of \(bound.size) no tree can be checked against it; put a saved copy of "
                        + "a checkpoint of \(bound.size) events or more in the checkpoint file")
            } else {
                verdict = .extends  // a record here covers its size; the witness checks the proof it is sent
            }
            if let problem = Self.problem(size, verdict, bound) {
                throw ForkRefusal.refuse(
                    problem, log: origin, logger: logger,
                    metadata: ["floor": "\(bound.size)", "record": "\(bound.source)", "tree": "\(size)"])
            }
        }
    }

    /// What a refusal says: the missing range, or what differs; nil when the tree extends the record.
    static func problem(_ size: Int64, _ verdict: TreeExtension.Verdict, _ bound: Bound) -> String? {
        switch verdict {
        case .extends:
            return nil
        case .shorter(let missing):
            let range =
                missing.lowerBound == missing.upperBound
                ? "event \(missing.lowerBound) is" : "events \(missing.lowerBound)…\(missing.upperBound) are"
            return "the log holds \(size) events; \(bound.source) covers \(bound.size): \(range) missing"
        case .differs(let why) where bound.root == nil:
            return "\(bound.source) has cosigned a checkpoint of \(bound.size) events, \(why)"
        case .differs(let why):
            return "the log's first \(bound.size) events are not the ones \(bound.source) covers: "
                + "its tree of \(size) does not extend that checkpoint (\(why))"
        }
    }

    /// The records: the file's checkpoint, the database's latest published and latest signed
    /// checkpoints (once each), then each witness's size.
    func bounds(witnessSizes: [String: Int64]) async throws -> [Bound] {
        var bounds: [Bound] = []
        var fileHolds = false
        if let file {
            let metadata: Logger.Metadata = ["file": "\(file.url.path)"]
            let kept: Checkpoint?
            do { kept = try file.checkpoint() } catch {
                throw ForkRefusal.refuse(
                    "\(file.url.path) does not hold a checkpoint: \(error)", log: origin, logger: logger, metadata: metadata)
            }
            if let kept {
                guard kept.origin == origin else {
                    throw ForkRefusal.refuse(
                        "\(file.url.path) holds a checkpoint of the log \(kept.origin), not of \(origin)",
                        log: origin, logger: logger, metadata: metadata)
                }
                bounds.append(Bound(size: kept.size, root: kept.rootHash, source: "the checkpoint in \(file.url.path)"))
                fileHolds = true
            }
        }
        // The published one first: where it is also the latest signed, it is named as published.
        for record in try await tree.store.latestRecorded().sorted(by: { $0.published && !$1.published }) {
            let source =
                record.published
                ? "the latest published checkpoint in the database" : "the latest signed checkpoint in the database (unpublished)"
            if !bounds.contains(where: { $0.size == record.size && $0.root == record.root }) {
                bounds.append(Bound(size: record.size, root: record.root, source: source))
            }
        }
        if let file, !fileHolds, !bounds.isEmpty {
            // Not a clean slate: the database's records and the witnesses' sizes still hold.
            logger.warning(
                "checkpointer: the checkpoint file is missing though the database holds checkpoints; checking against the database and the witnesses (the file is written again with the next checkpoint)",
                metadata: ["file": "\(file.url.path)"])
        }
        for (name, size) in witnessSizes.sorted(by: { $0.key < $1.key }) where size > 0 {
            bounds.append(Bound(size: size, root: nil, source: "witness \(name)"))
        }
        return bounds
    }
}
