import AsyncHTTPClient
import Foundation
import Logging
import Metrics
import NIOCore
import NIOHTTP1
import Synchronization
import TransparencyLog

/// Sends the checkpointer's checkpoints to the witnesses of a policy (C2SP `tlog-witness` v1:
/// `POST <url>/add-checkpoint` with the witness's last size and a consistency proof from it)
/// and returns the cosignatures that verify with their keys.
///
/// A witness's size is what it last said: unknown at first (sent from 0); a 409 names its size,
/// and the request is sent again from there. The sizes it said are part of the checkpointer's
/// floor (`heldSizes`, `CheckpointFloor`), learned before the first signature of a run by a
/// probe (`learnSizes`). A 403, 404 or 422 is a refusal, counted in
/// `ledger_witness_refusals_total{witness,status}` (an alert: a witness that refuses our log's
/// signature or its consistency sees another tree than we do); a 422, or a 409 naming a size
/// past ours, also contradicts the checkpoint (`Round.contradictions`), which is then not
/// published whatever the quorum. Other failures (a witness down) are counted in
/// `ledger_witness_errors_total{witness}` and end that witness's part of the round.
public final class WitnessClient: Sendable {
    public let policy: WitnessPolicy
    let tree: LogTree
    let http: HTTPClient
    let logger: Logger
    let timeout: TimeAmount
    /// The size each witness last said it holds (by a 200 or a 409), by name.
    private let sizes = Mutex<[String: Int64]>([:])

    /// One round of sending a checkpoint to every witness.
    public struct Round: Sendable {
        /// Each cosigning witness's cosignature line, by name.
        public var lines: [String: String] = [:]
        /// Each witness that holds a tree this checkpoint does not extend (a 422, or a 409 past
        /// its size), by name: why.
        public var contradictions: [String: String] = [:]
    }

    /// What one witness answered.
    enum Answer: Sendable {
        case cosigned(String)
        case contradicts(String)
        case none
    }

    public init(policy: WitnessPolicy, tree: LogTree, logger: Logger, http: HTTPClient = .shared, timeout: TimeAmount = .seconds(5)) {
        self.policy = policy
        self.tree = tree
        self.http = http
        self.logger = logger
        self.timeout = timeout
        for witness in policy.witnesses {
            for status in ["403", "404", "422"] {
                Counter(label: "ledger_witness_refusals_total", dimensions: [("witness", witness.name), ("status", status)]).increment(
                    by: 0)
            }
            Counter(label: "ledger_witness_errors_total", dimensions: [("witness", witness.name)]).increment(by: 0)
        }
    }

    /// The sizes the witnesses said they hold, by name (those that have answered).
    public func heldSizes() -> [String: Int64] { sizes.withLock { $0 } }

    /// The witnesses (with a URL) whose size is not known yet.
    public func unknownSizes() -> [String] {
        let known = heldSizes()
        return policy.witnesses.filter { $0.url != nil && known[$0.name] == nil }.map(\.name)
    }

    /// The policy in `file`, which must list `log` (the checkpointer's key) among its logs.
    public static func policy(file: String, log: NoteVerifier) throws -> WitnessPolicy {
        let policy = try WitnessPolicy(String(contentsOfFile: file, encoding: .utf8))
        guard policy.logs.contains(log) else {
            throw NoteError("the witness policy \(file) does not list this log's key \(log.text)")
        }
        guard
            !policy.witnesses.contains(where: { $0.url == nil })
                || policy.isMet(by: Set(policy.witnesses.filter { $0.url != nil }.map(\.name)))
        else {
            throw NoteError("the witness policy's quorum needs witnesses it gives no URL for")
        }
        return policy
    }

    /// Sends `note` (whose text is `text`) to every witness at once: their cosignature lines,
    /// and the witnesses it contradicts.
    public func cosignatures(of note: String, checkpoint: Checkpoint, text: String) async -> Round {
        await withTaskGroup(of: (String, Answer).self) { group in
            for witness in policy.witnesses where witness.url != nil {
                group.addTask { (witness.name, await self.submit(note, checkpoint: checkpoint, text: text, to: witness)) }
            }
            var round = Round()
            for await (name, answer) in group {
                switch answer {
                case .cosigned(let line): round.lines[name] = line
                case .contradicts(let why): round.contradictions[name] = why
                case .none: break
                }
            }
            return round
        }
    }

    /// Asks each witness whose size is not known yet for it, with `probe`: this log's signed
    /// checkpoint of the empty tree, sent from size 0. A witness holding a checkpoint of this
    /// log answers 409 with its size; one holding none cosigns the empty tree (which every tree
    /// extends) and holds 0. Other answers leave the size unknown (learned from the witness's
    /// first answer to a real checkpoint).
    public func learnSizes(probe: String) async {
        await withTaskGroup(of: Void.self) { group in
            for witness in policy.witnesses where witness.url != nil && sizes.withLock({ $0[witness.name] == nil }) {
                group.addTask { await self.learnSize(of: witness, probe: probe) }
            }
        }
    }

    private func learnSize(of witness: WitnessPolicy.Witness, probe: String) async {
        do {
            let (status, body) = try await post(AddCheckpoint(oldSize: 0, proof: [], note: probe), to: witness)
            let size: Int64? =
                switch status {
                case 200: 0
                case 409: Int64(body.trimmingCharacters(in: .whitespacesAndNewlines))
                default: nil
                }
            guard let size, size >= 0 else {
                logger.warning("witness: its size is unknown", metadata: ["witness": "\(witness.name)", "status": "\(status)"])
                return
            }
            sizes.withLock { $0[witness.name] = size }
        } catch {
            Counter(label: "ledger_witness_errors_total", dimensions: [("witness", witness.name)]).increment()
            logger.warning("witness: its size is unknown", metadata: ["witness": "\(witness.name)", "error": "\(error)"])
        }
    }

    private func post(_ request: AddCheckpoint, to witness: WitnessPolicy.Witness) async throws -> (status: UInt, body: String) {
        let url = witness.url!.hasSuffix("/") ? witness.url! + "add-checkpoint" : witness.url! + "/add-checkpoint"
        var outgoing = HTTPClientRequest(url: url)
        outgoing.method = .POST
        outgoing.body = .bytes(ByteBuffer(string: request.body))
        let response = try await http.execute(outgoing, timeout: timeout)
        return (response.status.code, String(buffer: try await response.body.collect(upTo: 64 * 1024)))
    }

    private func submit(_ note: String, checkpoint: Checkpoint, text: String, to witness: WitnessPolicy.Witness) async -> Answer {
        for _ in 0..<3 {
            let old = sizes.withLock { $0[witness.name] ?? 0 }
            guard old <= checkpoint.size else {
                let why = "it has cosigned a tree of \(old) events, larger than ours of \(checkpoint.size)"
                refused(witness, "409", why)
                return .contradicts(why)
            }
            do {
                let proof = old == 0 || old == checkpoint.size ? [] : try await tree.consistencyProof(from: old, to: checkpoint.size)
                let (status, body) = try await post(AddCheckpoint(oldSize: old, proof: proof, note: note), to: witness)
                switch status {
                case 200:
                    let (_, signatures) = try SignedNote.parse(text + "\n" + body)
                    guard let line = signatures.first(where: { $0.name == witness.key.name && $0.keyID == witness.key.keyID }),
                        try witness.key.time(of: text, in: [line]) != nil
                    else {
                        refused(witness, "200", "its answer holds no cosignature by its key")
                        return .none
                    }
                    sizes.withLock { $0[witness.name] = checkpoint.size }
                    return .cosigned(line.line)
                case 409:
                    guard let size = Int64(body.trimmingCharacters(in: .whitespacesAndNewlines)), size >= 0 else {
                        refused(witness, "409", "a 409 without its size")
                        return .none
                    }
                    sizes.withLock { $0[witness.name] = size }
                case 422:
                    refused(witness, "422", body)
                    return .contradicts("it refused the consistency proof from its size \(old): \(body.prefix(200))")
                case 403, 404:
                    refused(witness, String(status), body)
                    return .none
                default:
                    throw WitnessUnavailable(status: Int(status), body: body)
                }
            } catch {
                Counter(label: "ledger_witness_errors_total", dimensions: [("witness", witness.name)]).increment()
                logger.warning("witness: no cosignature", metadata: ["witness": "\(witness.name)", "error": "\(error)"])
                return .none
            }
        }
        return .none
    }

    private func refused(_ witness: WitnessPolicy.Witness, _ status: String, _ why: String) {
        Counter(label: "ledger_witness_refusals_total", dimensions: [("witness", witness.name), ("status", status)]).increment()
        logger.error(
            "witness refused our checkpoint: it may see another tree than ours",
            metadata: ["witness": "\(witness.name)", "status": "\(status)", "why": "\(why.prefix(200))"])
    }

    struct WitnessUnavailable: Error, CustomStringConvertible {
        var status: Int
        var body: String
        var description: String { "HTTP \(status): \(body.prefix(200))" }
    }
}
