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
/// A witness's size is what it last said: 0 at first; a 409 names its size, and the request is
/// sent again from there. A 403, 404 or 422 is a refusal, counted in
/// `ledger_witness_refusals_total{witness,status}` (an alert: a witness that refuses our log's
/// signature or its consistency sees another tree than we do); other failures (a witness down)
/// are counted in `ledger_witness_errors_total{witness}` and end that witness's part of the round.
public final class WitnessClient: Sendable {
    public let policy: WitnessPolicy
    let tree: LogTree
    let http: HTTPClient
    let logger: Logger
    let timeout: TimeAmount
    private let sizes = Mutex<[String: Int64]>([:])

    public init(policy: WitnessPolicy, tree: LogTree, logger: Logger, http: HTTPClient = .shared, timeout: TimeAmount = .seconds(5)) {
        self.policy = policy
        self.tree = tree
        self.http = http
        self.logger = logger
        self.timeout = timeout
        for witness in policy.witnesses {
            for status in ["403", "404", "422"] {
                Counter(label: "ledger_witness_refusals_total", dimensions: [("witness", witness.name), ("status", status)]).increment(by: 0)
            }
            Counter(label: "ledger_witness_errors_total", dimensions: [("witness", witness.name)]).increment(by: 0)
        }
    }

    /// The policy in `file`, which must list `log` (the checkpointer's key) among its logs.
    public static func policy(file: String, log: NoteVerifier) throws -> WitnessPolicy {
        let policy = try WitnessPolicy(String(contentsOfFile: file, encoding: .utf8))
        guard policy.logs.contains(log) else {
            throw NoteError("the witness policy \(file) does not list this log's key \(log.text)")
        }
        guard !policy.witnesses.contains(where: { $0.url == nil }) || policy.isMet(by: Set(policy.witnesses.filter { $0.url != nil }.map(\.name))) else {
            throw NoteError("the witness policy's quorum needs witnesses it gives no URL for")
        }
        return policy
    }

    /// Each witness's cosignature line of `note` (whose text is `text`), by witness name, from
    /// the witnesses that cosigned it; all asked at once.
    public func cosignatures(of note: String, checkpoint: Checkpoint, text: String) async -> [String: String] {
        await withTaskGroup(of: (String, String?).self) { group in
            for witness in policy.witnesses where witness.url != nil {
                group.addTask { (witness.name, await self.submit(note, checkpoint: checkpoint, text: text, to: witness)) }
            }
            var lines: [String: String] = [:]
            for await (name, line) in group { lines[name] = line }
            return lines
        }
    }

    private func submit(_ note: String, checkpoint: Checkpoint, text: String, to witness: WitnessPolicy.Witness) async -> String? {
        let url = witness.url!.hasSuffix("/") ? witness.url! + "add-checkpoint" : witness.url! + "/add-checkpoint"
        for _ in 0 ..< 3 {
            let old = sizes.withLock { $0[witness.name] ?? 0 }
            guard old <= checkpoint.size else {
                refused(witness, "409", "it has cosigned a tree of \(old) events, larger than ours of \(checkpoint.size)")
                return nil
            }
            do {
                let proof = old == 0 || old == checkpoint.size ? [] : try await tree.consistencyProof(from: old, to: checkpoint.size)
                var request = HTTPClientRequest(url: url)
                request.method = .POST
                request.body = .bytes(ByteBuffer(string: AddCheckpoint(oldSize: old, proof: proof, note: note).body))
                let response = try await http.execute(request, timeout: timeout)
                let body = String(buffer: try await response.body.collect(upTo: 64 * 1024))
                switch response.status.code {
                case 200:
                    let (_, signatures) = try SignedNote.parse(text + "\n" + body)
                    guard let line = signatures.first(where: { $0.name == witness.key.name && $0.keyID == witness.key.keyID }),
                        try witness.key.time(of: text, in: [line]) != nil
                    else {
                        refused(witness, "200", "its answer holds no cosignature by its key")
                        return nil
                    }
                    sizes.withLock { $0[witness.name] = checkpoint.size }
                    return line.line
                case 409:
                    guard let size = Int64(body.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                        refused(witness, "409", "a 409 without its size")
                        return nil
                    }
                    sizes.withLock { $0[witness.name] = size }
                case 403, 404, 422:
                    refused(witness, String(response.status.code), body)
                    return nil
                default:
                    throw WitnessUnavailable(status: Int(response.status.code), body: body)
                }
            } catch {
                Counter(label: "ledger_witness_errors_total", dimensions: [("witness", witness.name)]).increment()
                logger.warning("witness: no cosignature", metadata: ["witness": "\(witness.name)", "error": "\(error)"])
                return nil
            }
        }
        return nil
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
