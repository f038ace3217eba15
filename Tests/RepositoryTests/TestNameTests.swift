import Foundation
import Testing

/// A test's name fits on one line of a run's output (issue 65): the name of every `@Test("…")`
/// and `@Suite("…")` under Tests/ is at most 100 characters. What does not fit goes in a `///`
/// comment above the test.
@Suite("Test names")
struct TestNameTests {
    /// The package's root: this file is Tests/RepositoryTests/TestNameTests.swift.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let limit = 100

    @Test("every @Test and @Suite name under Tests/ is at most 100 characters")
    func namesFitOnALine() throws {
        let tests = Self.root.appendingPathComponent("Tests")
        let files = try FileManager.default.subpathsOfDirectory(atPath: tests.path).filter { $0.hasSuffix(".swift") }.sorted()
        #expect(files.count > 50, "the scan found the tests in \(tests.path)")
        // The attribute and its first argument when that is a string literal, on the same line or
        // the next (a long name's formatting).
        let named = try Regex(#"@(?:Test|Suite)\s*\(\s*"((?:[^"\\\n]|\\.)*)""#)
        var names = 0
        var long: [String] = []
        for file in files {
            let text = try String(contentsOf: tests.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: named) {
                guard let literal = match.output[1].substring else { continue }
                names += 1
                let name = literal.replacingOccurrences(of: #"\""#, with: #"""#)
                if name.count > Self.limit {
                    let line = text[..<match.range.lowerBound].count(where: { $0 == "\n" }) + 1
                    long.append("Tests/\(file):\(line) (\(name.count) characters)")
                }
            }
        }
        #expect(names > 300, "the scan found the tests' names")
        #expect(long.isEmpty, "names over \(Self.limit) characters (move the detail into a /// comment): \(long)")
    }
}
