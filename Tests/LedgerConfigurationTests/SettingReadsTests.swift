import Foundation
import LedgerConfiguration
import Testing

/// Every setting goes through `LedgerConfiguration`: no other source file reads a `LEDGER_`
/// variable by its name, and a flag's help carries the setting's own variable and default.
struct SettingReadsTests {
    /// The package's root: this file is Tests/LedgerConfigurationTests/SettingReadsTests.swift.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// No Swift source outside LedgerConfiguration reads a LEDGER_ variable by a string key (a
    /// subscript such as environment["LEDGER_…"], or getenv).
    @Test("no source outside LedgerConfiguration reads a LEDGER_ variable by a string key or getenv")
    func noReadsByName() throws {
        let sources = Self.root.appendingPathComponent("Sources")
        let files = try FileManager.default.subpathsOfDirectory(atPath: sources.path)
            .filter { $0.hasSuffix(".swift") && !$0.hasPrefix("LedgerConfiguration/") }
        #expect(files.count > 100, "the scan found the sources in \(sources.path)")
        // A subscript or getenv with a LEDGER_ string literal: a setting read by its name.
        let byName = try Regex(#"(\[\s*"LEDGER_[A-Z0-9_]*"\s*\]|getenv\(\s*"LEDGER_)"#)
        var found: [String] = []
        for file in files {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") && line.contains(byName) {
                found.append("Sources/\(file):\(index + 1)")
            }
        }
        #expect(found.isEmpty, "read these through LedgerConfiguration (a field, or Setting.value(in:)): \(found)")
    }

    @Test("a setting's value as set: unset and empty are nil, the default is not applied")
    func valueAsSet() throws {
        #expect(Setting.logLevel.value(in: [:]) == nil && Setting.logLevel.value(in: ["LEDGER_LOG_LEVEL": ""]) == nil)
        #expect(Setting.logLevel.value(in: ["LEDGER_LOG_LEVEL": "debug"]) == "debug")
        #expect(Setting.pgBin.value(in: ["LEDGER_PG_BIN": "/opt/pg/bin"]) == "/opt/pg/bin")
        #expect(try LedgerConfiguration(environment: ["LEDGER_PG_BIN": "/opt/pg/bin"]).pgBin == "/opt/pg/bin")
    }

    @Test("a flag's help is written from its setting: the variable, and the default or what unset means")
    func help() {
        #expect(Setting.dataDir.help("Data folder") == "Data folder (env LEDGER_DATA_DIR, default ./.ledger).")
        #expect(Setting.databaseURL.help("PostgreSQL URL") == "PostgreSQL URL (env LEDGER_DATABASE_URL; unset: embedded).")
        #expect(Setting.port.help() == "Listen port (env LEDGER_PORT, default 8080).")
        #expect(Setting.publicBaseURL.help() == "Base of universal links (env LEDGER_PUBLIC_BASE_URL, default http://HOST:PORT).")
        #expect(Setting.logKey.help() == "Verifier key for log verify --checkpoint and audit verify (env LEDGER_LOG_KEY).")
        for setting in LedgerSettings.all {
            let help = setting.help()
            #expect(help.contains("(env \(setting.variable)") && !help.contains("`"), "\(help)")
            if let value = setting.defaultValue { #expect(help.contains("default \(value))"), "\(help)") }
        }
    }
}
