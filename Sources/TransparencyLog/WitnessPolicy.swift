import Foundation

/// A C2SP `tlog-policy`: the logs a checkpoint may be signed by, the witnesses, and the quorum
/// of their cosignatures that makes a checkpoint count.
///
/// ```
/// log <vkey> [<url>]
/// witness <name> <vkey> [<url>]          # url: the witness's submission prefix
/// group <name> all|any|<k> <name>...
/// quorum <name>|none
/// ```
/// One directive a line; blank lines and lines starting with `#` are ignored. A group or the
/// quorum names only what earlier lines defined; a name is a member of a group at most once;
/// exactly one quorum line.
public struct WitnessPolicy: Sendable {
    public struct Witness: Sendable {
        public var name: String
        public var key: CosignatureVerifier
        public var url: String?
    }
    indirect enum Rule: Sendable {
        case witness(String)
        case group(needed: Int, of: [Rule])
        case none

        func satisfied(by cosigners: Set<String>) -> Bool {
            switch self {
            case .witness(let name): cosigners.contains(name)
            case .group(let needed, let members): members.filter { $0.satisfied(by: cosigners) }.count >= needed
            case .none: true
            }
        }
    }

    public private(set) var logs: [NoteVerifier] = []
    public private(set) var witnesses: [Witness] = []
    let quorum: Rule

    public init(_ text: String) throws {
        var rules: [String: Rule] = [:]
        var quorum: Rule?
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let fields = raw.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
            guard let directive = fields.first, !directive.hasPrefix("#") else { continue }
            func fail(_ why: String) -> NoteError { NoteError("policy line \(number + 1): \(why)") }
            switch directive {
            case "log":
                guard fields.count == 2 || fields.count == 3 else { throw fail("log <vkey> [<url>]") }
                let key = try NoteVerifier(fields[1])
                guard !logs.contains(where: { $0.publicKey == key.publicKey }) else { throw fail("this log is listed twice") }
                logs.append(key)
            case "witness":
                guard fields.count == 3 || fields.count == 4 else { throw fail("witness <name> <vkey> [<url>]") }
                let key = try CosignatureVerifier(fields[2])
                guard rules[fields[1]] == nil, fields[1] != "none" else { throw fail("\(fields[1]) is defined already") }
                guard !witnesses.contains(where: { $0.key.publicKey == key.publicKey }) else {
                    throw fail("this witness key is listed twice")
                }
                witnesses.append(Witness(name: fields[1], key: key, url: fields.count == 4 ? fields[3] : nil))
                rules[fields[1]] = .witness(fields[1])
            case "group":
                guard fields.count >= 4 else { throw fail("group <name> all|any|<k> <name>...") }
                guard rules[fields[1]] == nil, fields[1] != "none" else { throw fail("\(fields[1]) is defined already") }
                let names = Array(fields[3...])
                guard Set(names).count == names.count else { throw fail("a name is a member of a group at most once") }
                let members = try names.map { name in
                    guard let rule = rules[name] else { throw fail("\(name) is not defined on an earlier line") }
                    return rule
                }
                let needed: Int
                switch fields[2] {
                case "all": needed = members.count
                case "any": needed = 1
                default:
                    guard let k = Int(fields[2]), String(k) == fields[2], k >= 1, k <= members.count else {
                        throw fail("the threshold is all, any or a number from 1 to the number of members")
                    }
                    needed = k
                }
                rules[fields[1]] = .group(needed: needed, of: members)
            case "quorum":
                guard fields.count == 2 else { throw fail("quorum <name>|none") }
                guard quorum == nil else { throw fail("a policy has one quorum line") }
                guard let rule = fields[1] == "none" ? Rule.none : rules[fields[1]] else {
                    throw fail("\(fields[1]) is not defined on an earlier line")
                }
                quorum = rule
            default:
                throw fail("unknown directive \(directive.debugDescription)")
            }
        }
        guard let quorum else { throw NoteError("a policy needs a quorum line") }
        self.quorum = quorum
    }

    /// Whether cosignatures by these witnesses meet the quorum.
    public func isMet(by cosigners: Set<String>) -> Bool { quorum.satisfied(by: cosigners) }

    /// A checkpoint that counts: signed by one of the policy's logs (its origin that log's
    /// name), cosigned by witnesses meeting the quorum. Returns it and the witnesses that
    /// cosigned; throws naming what is missing.
    public func verify(_ note: String) throws -> (checkpoint: Checkpoint, cosigners: [String]) {
        let (text, signatures) = try SignedNote.parse(note)
        let checkpoint = try Checkpoint(text: text)
        guard let log = logs.first(where: { $0.name == checkpoint.origin }) else {
            throw NoteError("the policy lists no log named \(checkpoint.origin)")
        }
        _ = try Checkpoint.open(note, verifier: log)
        var cosigners: [String] = []
        for witness in witnesses where try witness.key.time(of: text, in: signatures) != nil {
            cosigners.append(witness.name)
        }
        guard isMet(by: Set(cosigners)) else {
            throw NoteError(
                "the checkpoint of size \(checkpoint.size) is not cosigned by the policy's quorum (cosigned by: "
                    + (cosigners.isEmpty ? "no witness" : cosigners.joined(separator: ", ")) + ")")
        }
        return (checkpoint, cosigners)
    }
}
