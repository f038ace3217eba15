import Foundation
import LedgerTestSupport
import Testing

/// docs/ARCHITECTURE.md stays true: its target table names exactly the package's targets, and
/// every file it names (Swift under `Sources/`, SQL under `Migrations/`) exists.
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
}
