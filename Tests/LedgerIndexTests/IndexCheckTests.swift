import Foundation
import LedgerDeviceSimulator
import LedgerDomain
import LedgerIndex
import Testing

/// `scripts/index-check`, the index written again in Python from docs/TRUST.md alone, against
/// this target's roots: two implementations sharing no code agree, as Go's tlog agrees with
/// our tiles.
@Suite("The Python reimplementation")
struct IndexCheckTests {
    /// Data at the edges of the map function's JSON rules, each in a collaboration's event.
    static func edgeCases() -> [String] {
        let hash = Data((0..<32).map { UInt8($0 * 5) }).base64EncodedString()
        let stray = String(hash.dropLast(2)) + "9="
        return [
            #"{"rootHash":"\#(hash)","n":\#(String(repeating: "9", count: 5_000))}"#, #"{"rootHash":"\#(hash)","n":1e999}"#,
            #"{"rootHash":"\#(hash)","rootHash":"\#(hash)"}"#, #"{"mentionedRootHash":"\#(hash)","n":"\ud800"}"#,
            #"{"rootHash":"\#(hash)","n":"\ud83d\ude00 é \u00e9"}"#, #"{"rootHash":"\#(hash)","n":NaN}"#, #"{"rootHash":"\#(stray)"}"#,
            #"{"rootHash":"\#(hash.replacingOccurrences(of: "/", with: #"\/"#))"}"#, "\u{FEFF}{\"rootHash\":\"\(hash)\"}",
            #"{"rootHash":"\#(hash)","n":\#(String(repeating: "[", count: 511) + String(repeating: "]", count: 511))}"#,
            #"{"rootHash":"\#(hash)","n":\#(String(repeating: "[", count: 512) + String(repeating: "]", count: 512))}"#,
            #"{"rootHash":"\#(hash)","n":\#(String(repeating: "{\"a\":", count: 600) + "1" + String(repeating: "}", count: 600))}"#,
            #"{"r\u006FotHash":"\#(hash)"}"#, #"{"rootHash":"\#(hash)","n":01}"#, #"{"rootHash":"\#(hash)","n":-0.5E+3}"#,
            #"{"rootHash":"\#(hash)"}  "#, #"[{"rootHash":"\#(hash)"}]"#, #"{"rootHash":"\#(hash)","n":"tab\#tin"}"#,
        ]
    }

    /// A simulated log with the edge cases among its events and revision records every so
    /// often, the records' roots from `LogIndex`; and the roots at other sizes.
    static func log(seed: UInt64, corrupt: Bool = false) async throws -> (leaves: [[UInt8]], roots: [(Int, Hash256)]) {
        var log = SimulatedLog(seed: seed, collaborations: 40, eventsEach: 40)
        for (n, data) in edgeCases().enumerated() {
            log.append(stream: "collaboration-edge-\(n % 3)", type: "IdentityAdded", data: data, version: Int64(n + 1))
        }
        var random = SeededRandom(seed: seed)
        var leaves: [[UInt8]] = []
        // Each leaf written again for the position it takes here, between the records.
        func append(_ leaf: [UInt8]) {
            var event = EventLeaf.event(from: leaf)!
            event.position = Int64(leaves.count + 1)
            leaves.append(EventLeaf.bytes(event))
        }
        var roots: [(Int, Hash256)] = [(0, .zero)]
        let index = LogIndex(store: MemoryNodeStore())
        var folded = 0
        for leaf in log.leaves {
            append(leaf)
            guard random.next() % 97 == 0 else { continue }
            let root = try await index.append(leaves[folded...], from: Int64(folded + 1))
            folded = leaves.count
            if random.next() % 2 == 0 {
                roots.append((leaves.count, root))
            } else {
                let recorded = corrupt && roots.count > 3 ? random.hash() : root
                var record = SimulatedLog()
                let revision = try IndexRevision(logSize: Int64(leaves.count), root: recorded)
                record.append(stream: IndexRevision.stream, type: IndexRevision.type, data: revision.data)
                append(record.leaves[0])
            }
        }
        roots.append((leaves.count, try await index.append(leaves[folded...], from: Int64(folded + 1))))
        return (leaves, roots)
    }

    @Test("on a simulated log with edge cases and revision records, Python's roots are ours")
    func agrees() async throws {
        let (leaves, roots) = try await Self.log(seed: 31)
        #expect(leaves.count > 1_600 && roots.count > 5)
        let run = try await Self.run(leaves: leaves, roots: roots)
        #expect(run.status == 0, "\(run.output)")
        let records = leaves.count(where: { IndexRevision.recorded(in: $0) != nil })
        #expect(records > 3)
        #expect(run.output.contains("OK: \(roots.count + records) roots agree over \(leaves.count) leaves"), "\(run.output)")
    }

    @Test("a given root or a recorded root that is not the index's is named, and exits 1")
    func disagrees() async throws {
        var (leaves, roots) = try await Self.log(seed: 32)
        let (size, _) = roots[roots.count / 2]
        roots[roots.count / 2].1 = Hash256([UInt8](repeating: 1, count: 32))!
        let given = try await Self.run(leaves: leaves, roots: roots)
        #expect(given.status == 1)
        #expect(given.output.contains("FAIL: at log size \(size) the index root is"), "\(given.output)")
        (leaves, roots) = try await Self.log(seed: 33, corrupt: true)
        let recorded = try await Self.run(leaves: leaves, roots: roots)
        #expect(recorded.status == 1)
        #expect(recorded.output.contains("; the record at position"), "\(recorded.output)")
    }

    /// Runs the script on `leaves` (a base64 line each) and `roots` ("N ROOT" lines).
    static func run(leaves: [[UInt8]], roots: [(Int, Hash256)]) async throws -> (status: Int32, output: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("index-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (leavesFile, rootsFile, outputFile) = (
            folder.appendingPathComponent("leaves"), folder.appendingPathComponent("roots"), folder.appendingPathComponent("out")
        )
        try leaves.map { Data($0).base64EncodedString() + "\n" }.joined().write(to: leavesFile, atomically: true, encoding: .utf8)
        try roots.map { "\($0.0) \($0.1.base64)\n" }.joined().write(to: rootsFile, atomically: true, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        let output = try FileHandle(forWritingTo: outputFile)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/index-check")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, leavesFile.path, rootsFile.path]
        process.standardOutput = output
        process.standardError = output
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        try output.close()
        return (status, try String(contentsOf: outputFile, encoding: .utf8))
    }
}

extension IndexRevision {
    /// The revision a leaf records, if it records one.
    static func recorded(in leaf: [UInt8]) -> IndexRevision? {
        guard let event = EventLeaf.event(from: leaf) else { return nil }
        return try? IndexRevision(streamId: event.streamId, type: event.type, data: event.data)
    }
}
