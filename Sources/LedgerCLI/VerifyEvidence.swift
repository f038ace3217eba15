import ArgumentParser
import Foundation
import LedgerConfiguration
import LedgerDomain
import LedgerIndex
import LedgerWire
import TransparencyLog

extension Audit {
    /// Offline: no database, no network. The file is what `GET /v1/audit/evidence/{position}`
    /// answers: the JSON document, or with `?format=tlog-proof` a C2SP tlog-proof (told apart by
    /// its first line, whatever the file's name); or what `GET /v1/audit/lookup` answers (JSON
    /// with a `record`).
    struct VerifyEvidence: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract:
                "Check evidence offline (a JSON document or a C2SP tlog-proof): checkpoint signature and cosignatures, leaf, inclusion proof, a grant's device proof, and each personal value against its commitment."
        )
        @Argument(help: "The evidence: a JSON document, or a C2SP tlog-proof (?format=tlog-proof, a .tlog-proof file).") var file: String
        @Option(help: ArgumentHelp(Setting.logKey.help("The log's verifier key (name+id+key)"))) var key: String?
        @Option(
            help:
                "A witness policy (C2SP tlog-policy) whose quorum must have cosigned the evidence's checkpoint; for a tlog-proof it may stand for --key (its log lines name the log's key)."
        ) var policy: String?
        @Option(
            help:
                "With a tlog-proof: the JSON evidence of the same event, whose openings of personal values are checked against the commitments in the proof's entry."
        ) var openings: String?
        @Option(
            help:
                "With a lookup answer: the position the answer must be complete through (its index revision covers 1 … at least this)."
        ) var through: Int64?
        @Option(
            help:
                "With a lookup answer asked with at=T: that RFC 3339 time; the answer must show the first event recorded after it, and only the positions recorded by then are printed."
        ) var at: String?
        @Option(help: "With a lookup answer: the collaboration asked about (the answer must be its).") var collaboration: String?
        @Option(help: "With a lookup answer on shards: the shard that holds the collaboration (the answer must be its).") var shard: Int?
        @Option(help: "With a lookup answer: the identity asked about, a root hash in base64 (the answer must be its).") var identity:
            String?
        @Option(
            help:
                "On shards, with a tlog-proof of the event (its shard's level): the top level's tlog-proof of the same event (&level=top), checked with --key, the deployment's, and --policy's witnesses."
        ) var top: String?

        func run() throws {
            let contents: Data
            do {
                contents = try Data(contentsOf: URL(fileURLWithPath: file))
            } catch {
                print("audit verify: FAILED: \(error)")
                throw ExitCode(2)
            }
            let isProof = contents.starts(with: Array((TlogProof.header + "\n").utf8))
            let keyText = try key ?? loadConfiguration().logKey
            guard keyText != nil || (isProof && policy != nil) else {
                throw ValidationError(
                    "--key (or LEDGER_LOG_KEY) is required: the verifier key the checkpoint must be signed with (a tlog-proof may be checked by --policy alone)"
                )
            }
            guard openings == nil || isProof else {
                throw ValidationError("--openings is for a tlog-proof: JSON evidence carries its openings")
            }
            guard top == nil || (isProof && keyText != nil) else {
                throw ValidationError(
                    "--top is for a shard's tlog-proof, with --key: the deployment's key (the shard's is derived from it)")
            }
            let verifier = try keyText.map { try NoteVerifier($0) }
            // A lookup answer is the JSON object with a `record`, or (an identity's on shards) with
            // `shards`; anything else is evidence.
            let object = isProof ? nil : try? JSONDecoder().decode(JSONValue.self, from: contents)
            let isSharded = object?["shards"] != nil && object?["identity"] != nil
            let isLookup = object?["record"] != nil || isSharded
            guard isLookup || (through == nil && at == nil && collaboration == nil && identity == nil && shard == nil) else {
                throw ValidationError(
                    "--through, --at, --collaboration, --identity and --shard are for a lookup answer (GET /v1/audit/lookup)")
            }
            if isSharded, let verifier { return try verifyShardedLookup(contents, key: verifier) }
            if isLookup, let verifier { return try verifyLookup(contents, key: verifier) }
            do {
                let witnesses = try policy.map { try WitnessPolicy(String(contentsOfFile: $0, encoding: .utf8)) }
                let report: EvidenceVerifier.Report
                if isProof {
                    guard let text = String(data: contents, encoding: .utf8) else {
                        throw ValidationError("the tlog-proof is not UTF-8 text")
                    }
                    report = try verifyProof(text, key: verifier, policy: witnesses)
                } else if let verifier {
                    report = try verifyDocument(contents, key: verifier, policy: witnesses)
                } else {
                    throw ValidationError("--key is required for JSON evidence")  // refused above already
                }
                print(
                    "audit verify: OK, \(report.type) at position \(report.position) is in the log of \(report.treeSize) events signed by "
                        + (verifier?.name ?? "a log of the policy")
                        + (report.shard.map { shard in
                            "/shard/\(shard), whose checkpoint is in the top log of \(report.topTreeSize ?? 0) entries signed by \(verifier?.name ?? "")"
                        } ?? "")
                        + (report.deviceProofChecked ? "; the device's proof verifies" : "")
                        + (report.openingsChecked > 0 ? "; \(report.openingsChecked) personal value(s) open their commitments" : "")
                        + (report.cosigners.map { "; cosigned by \($0.joined(separator: ", "))" } ?? ""))
            } catch {
                print("audit verify: FAILED: \(error)")
                throw ExitCode(2)
            }
        }

        /// A lookup answer (`GET /v1/audit/lookup`): every link of its chain, then the policy's
        /// quorum on its checkpoint; prints the positions.
        func verifyLookup(_ contents: Data, key: NoteVerifier) throws {
            // The key asked, never only the one the answer names: a look-alike key's honest
            // absence (another collaboration, an id in another Unicode form) would pass.
            let asked: IndexKey
            switch (collaboration, identity) {
            case (let id?, nil): asked = .collaboration(id)
            case (nil, let text?):
                guard let identity = IndexKey.identity(base64: text) else {
                    throw ValidationError("--identity must be a root hash: the standard padded base64 of 32 bytes")
                }
                asked = identity
            default: throw ValidationError("a lookup answer is checked for the key asked: give --collaboration ID or --identity ROOTHASH")
            }
            let micros = try at.map(Audit.parseMicros)
            do {
                let lookup = try JSONDecoder().decode(IndexLookup.self, from: contents)
                let report = try LookupVerifier.verify(lookup, key: key, asked: asked, through: through, at: micros, shard: shard)
                // On shards the witnesses cosign the top log's checkpoint, the one auditors follow.
                let cosigners = try policy.map {
                    try WitnessPolicy(String(contentsOfFile: $0, encoding: .utf8)).verify(lookup.top?.checkpoint ?? lookup.checkpoint)
                }
                let listed = report.positions.isEmpty ? "no event" : "\(report.positions.count) event(s)"
                print(
                    "audit verify: OK, \(report.key): \(listed) among positions 1 … \(report.revisionSize), and no other "
                        + "(the index revision recorded at position \(report.recordPosition), in the log of \(report.treeSize) events signed by \(key.name)"
                        + (report.shard.map { "/shard/\($0), whose checkpoint is in the top log of \(report.topTreeSize ?? 0) entries" }
                            ?? "") + ")"
                        + (cosigners.map { "; cosigned by \($0.cosigners.joined(separator: ", "))" } ?? "")
                        + (report.recordedThrough.map { "; recorded by \(at ?? ""): positions 1 … \($0)" } ?? ""))
                for position in report.positions where position <= report.recordedThrough ?? .max { print(position) }
            } catch {
                print("audit verify: FAILED: \(error)")
                throw ExitCode(2)
            }
        }

        /// An identity's lookup across shards: every shard's answer, under one partition map that
        /// names exactly those shards; then the policy's quorum on each top checkpoint. Prints each
        /// listed event as `shard position`.
        func verifyShardedLookup(_ contents: Data, key: NoteVerifier) throws {
            guard let text = identity, let asked = IndexKey.identity(base64: text), collaboration == nil, shard == nil, through == nil
            else {
                throw ValidationError(
                    "an identity's lookup across shards is checked for the identity asked: give --identity ROOTHASH alone")
            }
            let micros = try at.map(Audit.parseMicros)
            do {
                let sharded = try JSONDecoder().decode(ShardedIndexLookup.self, from: contents)
                let reports = try LookupVerifier.verify(sharded, key: key, asked: asked, at: micros)
                let witnesses = try policy.map { try WitnessPolicy(String(contentsOfFile: $0, encoding: .utf8)) }
                for answer in sharded.shards { _ = try witnesses?.verify(answer.top?.checkpoint ?? answer.checkpoint) }
                let listed = reports.map { report in report.positions.filter { $0 <= report.recordedThrough ?? .max } }
                print(
                    "audit verify: OK, \(asked): \(listed.map(\.count).reduce(0, +)) event(s) on \(reports.count) shard(s), and no other "
                        + "(every shard of the partition map, each complete through its index revision\(at.map { "; recorded by \($0)" } ?? ""), "
                        + "signed by \(key.name)\(witnesses == nil ? "" : "; each top checkpoint cosigned as the policy asks"))")
                for (report, positions) in zip(reports, listed) {
                    for position in positions { print("\(report.shard ?? 0) \(position)") }
                }
            } catch {
                print("audit verify: FAILED: \(error)")
                throw ExitCode(2)
            }
        }

        /// The JSON evidence: its signature with `key`, then the policy's quorum on its checkpoint.
        func verifyDocument(_ contents: Data, key: NoteVerifier, policy: WitnessPolicy?) throws -> EvidenceVerifier.Report {
            let evidence = try JSONDecoder().decode(Evidence.self, from: contents)
            var report = try EvidenceVerifier.verify(evidence, key: key)
            // On shards the witnesses cosign the top log's checkpoint, the one auditors follow.
            report.cosigners = try policy?.verify(evidence.top?.checkpoint ?? evidence.checkpoint).cosigners
            return report
        }

        /// A tlog-proof, with the openings of the JSON evidence given by `--openings` (refused
        /// unless that evidence is of the same event: its leaf is the proof's entry).
        func verifyProof(_ text: String, key: NoteVerifier?, policy: WitnessPolicy?) throws -> EvidenceVerifier.Report {
            let proof = try TlogProof(text: text)
            var opened: [Evidence.Opening] = []
            if let openings {
                let companion = try JSONDecoder().decode(Evidence.self, from: Data(contentsOf: URL(fileURLWithPath: openings)))
                guard let extra = proof.extra, Base64.decode(companion.leaf) == extra else {
                    throw ValidationError("openings: \(openings) is the evidence of another event than the proof's entry")
                }
                opened = companion.openings ?? []
            }
            guard let top else { return try EvidenceVerifier.verify(proof, key: key, policy: policy, openings: opened) }
            let topProof = try TlogProof(text: String(contentsOfFile: top, encoding: .utf8))
            return try EvidenceVerifier.verify(proof, top: topProof, key: key!, policy: policy, openings: opened)
        }
    }
}
