import Foundation
import Testing

@testable import LedgerAPI

/// The console publishes exactly the files it names (`ConsoleController.served`), without a
/// browser: each is in the bundle with a type, the folder holds nothing else, and every module's
/// `import … from './x.js'` names a served file (a module missing from the list would be a 404
/// only a browser notices).
@Suite("Console files")
struct ConsoleFilesTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/LedgerConsole/Console")

    @Test("the served list is the folder's files, each with a type; every module import names one of them")
    func servedList() throws {
        let inFolder = Set(try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).filter { !$0.hasPrefix(".") })
        #expect(Set(ConsoleController.served) == inFolder, "a console file is not served, or a served one is missing")
        #expect(Set(ConsoleController.files.keys) == Set(ConsoleController.served), "a served file is not in the bundle or has no type")
        let imports = try Regex(#"from\s+['"]\./([^'"]+)['"]"#)
        for name in ConsoleController.served where name.hasSuffix(".js") {
            let text = try String(contentsOf: Self.folder.appendingPathComponent(name), encoding: .utf8)
            for match in text.matches(of: imports) {
                let imported = String(match.output[1].substring ?? "")
                #expect(ConsoleController.served.contains(imported), "\(name) imports ./\(imported), which is not served")
            }
        }
    }
}
