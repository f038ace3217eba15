import Crypto
import Foundation
import LedgerPostgres
import LedgerTestSupport
import Testing

/// SPEC "Nothing links the person back", checked on `pg_dump` as someone holding the whole
/// database would: with every key in it and a list of candidate accounts, no table row may tell
/// which pseudonym was erased for which account.
extension ErasureTests {
    /// `pg_dump` of the whole database, as its owner.
    static func pgDump(_ settings: DatabaseSettings) async throws -> String {
        let environment = ProcessInfo.processInfo.environment.merging(["PGPASSWORD": settings.password ?? ""]) { $1 }
        return try await ProcessRunner.check(
            try EmbeddedPostgres.binaries() + "/pg_dump",
            ["-h", settings.host, "-p", String(settings.port), "-U", settings.username, "-d", settings.database], environment: environment)
    }

    /// Tables that may name an erased pseudonym: the log, its streams' states, the views and the
    /// proof tables (which name subjects by pseudonym only). None of them holds anything derived
    /// from an account.
    static let tablesNamingPseudonyms: Set<String> = [
        "ledger_events", "ledger_streams", "proj_collaborations", "proj_members", "proj_access_history", "proj_highlights",
        "ledger_challenges", "ledger_proof_requests",
    ]

    /// After devin's erasure: (1) the erased pseudonym appears only in `tablesNamingPseudonyms`
    /// and no erasure record is left (`ledger_erasures`, its key); (2) for 1,000 candidate accounts,
    /// devin's among them, neither the SHA-256 nor the HMAC-SHA256 under any key the dump holds
    /// (every bytea of 16 to 64 bytes; every field of 16 to 128 characters of a table of keys or
    /// webhooks, as text) occurs anywhere in the dump, as hex or base64. Positive controls: a live
    /// subject's row is found, and so are the SHA-256 digests of devin's Idempotency-Key and
    /// X-Request-Id, which the events keep.
    static func expectNoLink(dump: String, person: Person, pseudonym: String) {
        let tables = Self.tables(in: dump)
        let subjects = tables["ledger_subjects"] ?? []
        #expect(subjects.contains { $0.split(separator: "\t").contains("carol") }, "the dump's tables were read")
        let naming = Set(tables.filter { $0.value.contains { $0.contains(pseudonym) } }.keys)
        #expect(naming.isSubset(of: tablesNamingPseudonyms), "tables naming the erased pseudonym: \(naming.sorted())")
        #expect(naming.contains("ledger_events"), "the log names the pseudonym")
        #expect(!dump.contains("ledger_erasures") && !dump.contains("ledger_privacy_key"))

        let runs = Self.textRuns(in: dump)
        var windows = Set<[UInt8]>()
        for bytes in runs.flatMap(Self.decodings) where bytes.count >= 32 {
            for start in 0...(bytes.count - 32) { windows.insert(Array(bytes[start..<(start + 32)])) }
        }
        let byteas = runs.filter { $0.hasPrefix("x") }.compactMap { Self.hexBytes($0.dropFirst()) }
        var keys = Set(byteas.filter { (16...64).contains($0.count) })
        for (table, rows) in tables where table.contains("key") || table.contains("webhook") {
            for field in rows.flatMap({ $0.split(separator: "\t") }) where (16...128).contains(field.utf8.count) {
                keys.insert(Array(field.utf8))
            }
        }
        #expect(!keys.isEmpty, "the dump's keys were read")
        let symmetricKeys = keys.map { SymmetricKey(data: $0) }
        func derivations(_ candidate: String) -> [[UInt8]] {
            let message = Array(candidate.utf8)
            let keyed = symmetricKeys.map { Array(HMAC<SHA256>.authenticationCode(for: message, using: $0)) }
            return [Array(SHA256.hash(data: message))] + keyed
        }
        for control in [person.idempotencyKey, person.requestId] {
            let digest = Array(SHA256.hash(data: Array(control.utf8)))
            #expect(windows.contains(digest), "the SHA-256 of \(control) is kept: the check sees digests")
        }
        var candidates = (0..<999).map { "candidate-\(person.tag)-\($0)" } + [person.account]
        candidates.shuffle()
        let linked = candidates.filter { candidate in derivations(candidate).contains { windows.contains($0) } }
        #expect(linked == [], "accounts whose hash or keyed hash the dump holds")
    }

    /// Each table's rows (COPY blocks of a plain-format dump), as text.
    static func tables(in dump: String) -> [String: [Substring]] {
        var tables: [String: [Substring]] = [:]
        var current: String?
        for line in dump.split(separator: "\n", omittingEmptySubsequences: false) {
            if let table = current {
                if line == "\\." { current = nil } else { tables[table, default: []].append(line) }
            } else if line.hasPrefix("COPY public.") {
                let rest = line.dropFirst("COPY public.".count)
                let name = String(rest.prefix { $0 != " " })
                current = name
                tables[name] = tables[name] ?? []
            }
        }
        return tables
    }

    /// The bytes a run may spell: hex (bytea after its `x`, digests) and base64 (commitments,
    /// hashes and keys in JSON), where it decodes.
    static func decodings(_ run: String) -> [[UInt8]] {
        var decoded: [[UInt8]] = []
        let hex = run.hasPrefix("x") ? run.dropFirst() : Substring(run)
        if let bytes = Self.hexBytes(hex.count % 2 == 0 ? hex : hex.dropLast()) { decoded.append(bytes) }
        let padded = run + String(repeating: "=", count: (4 - run.count % 4) % 4)
        if let bytes = Data(base64Encoded: run) ?? Data(base64Encoded: padded) { decoded.append(Array(bytes)) }
        return decoded
    }

    /// Maximal runs of base64's alphabet (which holds hex's) at least 22 characters long.
    static func textRuns(in dump: String) -> [String] {
        var runs: [String] = []
        var run = ""
        func flush() {
            if run.count >= 22 { runs.append(run) }
            run = ""
        }
        for scalar in dump.unicodeScalars {
            switch scalar {
            case "A"..."Z", "a"..."z", "0"..."9", "+", "/", "=": run.unicodeScalars.append(scalar)
            default: flush()
            }
        }
        flush()
        return runs
    }

    static func hexBytes(_ text: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in text {
            guard let nibble = character.hexDigitValue.map(UInt8.init) else { return nil }
            if let h = high {
                bytes.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return bytes
    }
}
