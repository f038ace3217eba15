import Foundation
import LedgerTestSupport
import Testing

/// docs/ARCHITECTURE.md stays true: its target table names exactly the package's targets, every
/// file it names (Swift under `Sources/`, SQL under `Migrations/`) exists, and every file a way
/// through the code names is on that way (`SourceGraph`).
@Suite("The architecture document")
struct ArchitectureDocTests {
    static func read(_ path: String) throws -> String {
        try String(contentsOf: Repository.root.appendingPathComponent(path), encoding: .utf8)
    }

    @Test("the target table names exactly the targets of Package.swift")
    func targets() throws {
        let package = try Self.read("Package.swift")
        let declared = Set(package.matches(of: #/\.(?:target|executableTarget)\(\s*name:\s*"([A-Za-z]+)"/#).map { String($0.1) })
        let doc = try Self.read("docs/ARCHITECTURE.md")
        let table = try #require(doc.components(separatedBy: "## Targets").dropFirst().first).components(separatedBy: "\n## ")[0]
        var documented = Set<String>()
        for line in table.split(separator: "\n") where line.hasPrefix("| `") {
            for name in line.split(separator: "|")[0].matches(of: #/`([A-Za-z]+)`/#) { documented.insert(String(name.1)) }
        }
        #expect(declared.count > 15)
        #expect(
            documented == declared,
            "only in the table: \(documented.subtracting(declared).sorted()); only in Package.swift: \(declared.subtracting(documented).sorted())"
        )
    }

    @Test("every file the document names exists")
    func files() throws {
        let doc = try Self.read("docs/ARCHITECTURE.md")
        let named = doc.matches(of: #/`([A-Za-z]+/[A-Za-z0-9_+./-]+\.(?:swift|sql))`/#).map { String($0.1) }
        #expect(named.count > 50, "the ways through list their files")
        let missing = named.filter { name in
            let path = name.hasPrefix("Migrations/") ? name : "Sources/" + name
            return !FileManager.default.fileExists(atPath: Repository.root.appendingPathComponent(path).path)
        }
        #expect(missing.isEmpty, "named in docs/ARCHITECTURE.md but missing: \(missing)")
    }

    /// The ways through, each with its entry points and the files it names.
    static func ways() throws -> [(title: String, entries: [String], named: [String])] {
        let doc = try read("docs/ARCHITECTURE.md")
        let section = try #require(doc.components(separatedBy: "## Five ways through").dropFirst().first).components(separatedBy: "\n## ")[
            0]
        return section.components(separatedBy: "\n**").dropFirst().map { way in
            let title = way.components(separatedBy: "**")[0]
            let entryLine = way.split(separator: "\n").first { $0.hasPrefix("Entry points: ") } ?? ""
            let paths = #/`([A-Za-z]+/[A-Za-z0-9_+./-]+\.(?:swift|sql))`/#
            return (title, entryLine.matches(of: paths).map { String($0.1) }, way.matches(of: paths).map { String($0.1) })
        }
    }

    @Test("each file a way through names is reached from its entry points or reaches one (its callers)")
    func waysReachTheirFiles() throws {
        let graph = try SourceGraph(root: Repository.root)
        let ways = try Self.ways()
        #expect(ways.count == 5)
        for way in ways {
            #expect(!way.entries.isEmpty, "\(way.title): no entry points")
            let onTheWay = graph.reached(from: way.entries).union(graph.callers(of: way.entries))
            let strays = way.named.filter { !onTheWay.contains($0) }
            #expect(strays.isEmpty, "\(way.title): named, but neither reached from \(way.entries) nor reaching them: \(strays)")
        }
        // The map tells files apart: a benchmark is on none of the ways, and the tiles' server side
        // does not reach the evidence's command-line check.
        for way in ways { #expect(!graph.reached(from: way.entries).contains("LedgerBench/BenchCommands.swift"), "\(way.title)") }
        #expect(!graph.reached(from: ["LedgerAPI/TileController.swift"]).contains("LedgerCLI/VerifyEvidence.swift"))
    }
}
