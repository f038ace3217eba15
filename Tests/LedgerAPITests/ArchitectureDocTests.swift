import Foundation
import LedgerTestSupport
import Testing

/// docs/ARCHITECTURE.md stays true: its target table names exactly the package's targets and its
/// test table the test targets, every file it names (Swift under `Sources/`, SQL under
/// `Migrations/`) exists, and each way through the code (the five, and the expiry service's) names
/// every file on it and no other (`SourceGraph`).
///
/// The rule for a way (the document's "Five ways through" says it too): from its entry points,
/// follow what each file uses into the files of the targets it runs through; a `LedgerPostgres`
/// file (plumbing every way shares) is reached where a way's file uses it but not followed, and a
/// file the way marks "not followed" (one it uses in part) adds only the files it uses that the way
/// names. Every file reached must be named (the list is complete), and every file named must be
/// reached, but the way in: the files that bring work to the entry points (the process, the HTTP
/// server, the front, the router and its middleware), which compose every way and are not
/// followed, but must each reach an entry point or be used by another of the way in that does.
@Suite("The architecture document")
struct ArchitectureDocTests {
    static func read(_ path: String) throws -> String {
        try String(contentsOf: Repository.root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The section of the document under `heading`, up to the next.
    static func section(_ heading: String) throws -> String {
        let doc = try read("docs/ARCHITECTURE.md")
        return try #require(doc.components(separatedBy: "## \(heading)\n").dropFirst().first).components(separatedBy: "\n## ")[0]
    }

    @Test("the target table names exactly the targets of Package.swift")
    func targets() throws {
        let package = try Self.read("Package.swift")
        let declared = Set(package.matches(of: #/\.(?:target|executableTarget)\(\s*name:\s*"([A-Za-z]+)"/#).map { String($0.1) })
        var documented = Set<String>()
        for line in try Self.section("Targets").split(separator: "\n") where line.hasPrefix("| `") {
            for name in line.split(separator: "|")[0].matches(of: #/`([A-Za-z]+)`/#) { documented.insert(String(name.1)) }
        }
        #expect(declared.count > 15)
        #expect(
            documented == declared,
            "only in the table: \(documented.subtracting(declared).sorted()); only in Package.swift: \(declared.subtracting(documented).sorted())"
        )
    }

    @Test("the test table names exactly the test targets of Package.swift")
    func testTargets() throws {
        let package = try Self.read("Package.swift")
        let declared = Set(package.matches(of: #/\.testTarget\(\s*name:\s*"([A-Za-z]+)"/#).map { String($0.1) })
        var documented = Set<String>()
        for line in try Self.section("Tests").split(separator: "\n") where line.hasPrefix("| `") {
            for name in line.split(separator: "|")[0].matches(of: #/`([A-Za-z]+Tests)`/#) { documented.insert(String(name.1)) }
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
        let named = doc.matches(of: Way.path).map { String($0.1) }
        #expect(named.count > 50, "the ways through list their files")
        let missing = named.filter { name in
            let path = name.hasPrefix("Migrations/") ? name : "Sources/" + name
            return !FileManager.default.fileExists(atPath: Repository.root.appendingPathComponent(path).path)
        }
        #expect(missing.isEmpty, "named in docs/ARCHITECTURE.md but missing: \(missing)")
    }

    /// A way through the code as the document writes it: a bold title, then paragraphs that begin
    /// `Entry points:`, `Through:` and `Not followed:`, and bullets, one of them `- the way in:`.
    struct Way {
        var title: String
        /// Where the way's own work starts.
        var entries: [String]
        /// The targets it runs through (`Migrations` for `SQL`: the SQL functions).
        var through: Set<String>
        /// The files it uses only in part (what is in parentheses is their part, not a file).
        var partly: Set<String>
        /// What brings work to the entry points.
        var wayIn: Set<String>
        /// Every file it names (a numbered migration, `Migrations/sql/…`, is no file of the map).
        var named: Set<String>

        static var path: Regex<(Substring, Substring)> { #/`([A-Za-z]+/[A-Za-z0-9_+./-]+\.(?:swift|sql))`/# }

        static func ways(in section: String) -> [Way] {
            section.components(separatedBy: "\n**").dropFirst().map { text in
                let paragraphs = text.components(separatedBy: "\n\n")
                func paragraph(_ label: String) -> String { paragraphs.first { $0.hasPrefix(label) } ?? "" }
                func paths(_ text: String) -> [String] { text.matches(of: path).map { String($0.1) } }
                let through = paragraph("Through: ")
                var targets = Set(through.matches(of: #/`([A-Za-z]+)`/#).map { String($0.1) })
                if through.contains(" SQL") { targets.insert("Migrations") }
                // A bullet runs from its `- ` over the lines indented under it.
                var bullets: [String] = []
                for line in text.split(separator: "\n") {
                    if line.hasPrefix("- ") {
                        bullets.append(String(line))
                    } else if line.hasPrefix("  "), !bullets.isEmpty {
                        bullets[bullets.count - 1] += "\n" + line
                    }
                }
                return Way(
                    title: text.components(separatedBy: "**")[0], entries: paths(paragraph("Entry points: ")), through: targets,
                    partly: Set(paths(paragraph("Not followed: ").replacing(#/\([^()]*\)/#, with: ""))),
                    wayIn: Set(bullets.filter { $0.hasPrefix("- the way in: ") }.flatMap(paths)),
                    named: Set(paths(text).filter { !$0.hasPrefix("Migrations/sql/") }))
            }
        }
    }

    /// Plumbing every way shares: named where a way's file uses it, not followed.
    static let plumbing: Set<String> = ["LedgerPostgres"]

    @Test("each way through names every file reached from its entry points, and no other")
    func waysAreComplete() throws {
        let graph = try SourceGraph(root: Repository.root)
        let ways = Way.ways(in: try Self.section("Five ways through"))
        #expect(ways.count == 5)
        let expiry = Way.ways(in: try Self.section("Expiry"))
        #expect(expiry.count == 1, "the expiry service's files, as a way")
        for way in ways + expiry {
            #expect(!way.entries.isEmpty && way.through.count > 1, "\(way.title): no entry points, or no targets it runs through")
            let reached = graph.reached(
                from: way.entries, through: way.through, plumbing: Self.plumbing, partly: way.partly, names: way.named)
            let missing = reached.keys.filter { !way.named.contains($0) }.sorted().map { file in
                guard let from = reached[file] ?? nil else { return file }
                return "\(file) (\(from) uses it: \(graph.why(from, uses: file)))"
            }
            #expect(missing.isEmpty, "\(way.title): reached from its entry points, not named: \(missing)")
            let strays = way.named.subtracting(reached.keys).subtracting(way.wayIn).sorted()
            #expect(strays.isEmpty, "\(way.title): named, not reached from \(way.entries) through \(way.through.sorted()): \(strays)")
            let unused = way.partly.subtracting(reached.keys).sorted()
            #expect(unused.isEmpty, "\(way.title): not followed, and not reached either: \(unused)")
            // The way in: each file reaches an entry point, or is used by one of the way in that does.
            var connected = way.wayIn.intersection(graph.callers(of: way.entries))
            var stack = Array(connected)
            while let file = stack.popLast() {
                for used in graph.uses[file] ?? [] where way.wayIn.contains(used) && connected.insert(used).inserted { stack.append(used) }
            }
            #expect(
                way.wayIn.isSubset(of: connected),
                "\(way.title): the way in does not lead to \(way.entries): \(way.wayIn.subtracting(connected).sorted())")
        }
        // The map tells files apart: a benchmark is on none of the ways, and the tiles' server side
        // does not reach the evidence's command-line check.
        for way in ways { #expect(!graph.reached(from: way.entries).contains("LedgerBench/BenchCommands.swift"), "\(way.title)") }
        #expect(!graph.reached(from: ["LedgerAPI/TileController.swift"]).contains("LedgerCLI/VerifyEvidence.swift"))
    }
}
