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
    @Test("on a simulated log with edge cases and revision records, Python's roots are ours")
    func agrees() async throws {
        let log = try await IndexCheckLog(seed: 31)
        let (leaves, roots) = (log.leaves, log.roots)
        #expect(leaves.count > 1_600 && roots.count > 5)
        let edges = IndexCheckEdges.leaves()
        #expect(edges.allSatisfy { edge in leaves.contains(edge) }, "every edge leaf, the empty one included")
        #expect(edges.allSatisfy { IndexMap.keys(leaf: $0).isEmpty })
        let places = leaves.enumerated().compactMap { place, leaf in EventLeaf.event(from: leaf).map { ($0.position, Int64(place + 1)) } }
        #expect(places.count(where: { $0.0 != $0.1 }) > places.count / 3, "inner positions that are not the leaves' places")
        let run = try await IndexCheckRun.run(leaves: leaves, roots: roots)
        #expect(run.status == 0, "\(run.output)")
        let records = leaves.count(where: { IndexRevision.recorded(in: $0) != nil })
        #expect(records > 3)
        #expect(run.output.contains("OK: \(roots.count + records) roots agree over \(leaves.count) leaves"), "\(run.output)")
        // Where the leaves' times stop falling, as `LedgerClient.verifyIndex` reads it: this log's
        // inner positions (its times) are not its places, so it is past 1.
        var (riseFrom, last) = (1, Int64.min)
        for (place, leaf) in leaves.enumerated() {
            guard let time = EventLeaf.event(from: leaf)?.recordedAtMicros else { continue }
            if time < last { riseFrom = place + 1 }
            last = time
        }
        #expect(riseFrom > 1 && run.output.contains("times rise from position \(riseFrom)\n"), "\(riseFrom): \(run.output)")
    }

    @Test("a given root that is not the index's is named, and exits 1")
    func disagrees() async throws {
        let log = try await IndexCheckLog(seed: 32)
        var roots = log.roots
        let (size, _) = roots[roots.count / 2]
        roots[roots.count / 2].1 = Hash256([UInt8](repeating: 1, count: 32))!
        let given = try await IndexCheckRun.run(leaves: log.leaves, roots: roots)
        #expect(given.status == 1)
        #expect(given.output.contains("FAIL: at log size \(size) the index root is"), "\(given.output)")
    }

    @Test(
        "a revision record with a wrong root, out of order, or not written as specified is named, and exits 1",
        arguments: IndexCheckLog.Fault.allCases)
    func recordAtFault(fault: IndexCheckLog.Fault) async throws {
        let log = try await IndexCheckLog(seed: 33, fault: fault)
        let failure = try #require(log.failure)
        let run = try await IndexCheckRun.run(leaves: log.leaves, roots: log.roots)
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains(failure), "\(failure) in \(run.output)")
    }

    @Test("--help prints the usage and exits 0")
    func help() async throws {
        for flag in ["--help", "-h"] {
            let run = try await IndexCheckRun.run([IndexCheckRun.script.path, flag])
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("Usage: scripts/index-check LEAVES [ROOTS]"), "\(run.output)")
        }
        let none = try await IndexCheckRun.run([IndexCheckRun.script.path])
        #expect(none.status == 2 && none.output.contains("Usage:"), "\(none.output)")
    }

    @Test("without CPython's C JSON scanner, whose numbers are ASCII digits, the script refuses to run")
    func needsTheCScanner() async throws {
        var log = SimulatedLog()
        log.append(stream: "collaboration-digits", type: "IdentityAdded", data: #"{"rootHash":"\#(IndexCheckEdges.hash)","n":1٥}"#)
        #expect(IndexMap.keys(leaf: log.leaves[0]).count == 1, "not JSON: the collaboration alone")
        let root = try await LogIndex(store: MemoryNodeStore()).append(log.leaves, from: 1)
        let withC = try await IndexCheckRun.run(leaves: log.leaves, roots: [(1, root)])
        #expect(withC.status == 0, "\(withC.output)")
        let without = try await IndexCheckRun.run(leaves: log.leaves, roots: [(1, root)], withoutCScanner: true)
        #expect(without.status == 2, "\(without.output)")
        #expect(without.output.contains("C JSON scanner is missing"), "\(without.output)")
    }
}
