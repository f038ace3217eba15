import Foundation
import LedgerTestSupport

/// Which files of the package use which, by the names they mention: a Swift file reaches the
/// files that declare a type or free function it names (in its own target or a target it imports),
/// those types' extensions in the declaring target or its own, the files whose extension members
/// it calls by name, and the SQL function files (`Migrations/functions/ledger_….sql`) it names; a
/// SQL file reaches the SQL functions it calls. Comment lines are left out. A rough map, but one
/// that tells apart the files a way through the code uses from the rest of the package.
struct SourceGraph {
    /// Paths as the architecture document writes them: `Target/File.swift`,
    /// `Migrations/functions/name.sql`.
    private(set) var uses: [String: Set<String>] = [:]

    init(root: URL) throws {
        var texts: [String: String] = [:]
        let sources = root.appendingPathComponent("Sources")
        for target in try FileManager.default.contentsOfDirectory(atPath: sources.path) {
            let folder = sources.appendingPathComponent(target)
            for case let file as String in FileManager.default.enumerator(atPath: folder.path) ?? .init()
            where file.hasSuffix(".swift") {
                texts["\(target)/\(file)"] = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            }
        }
        let functions = root.appendingPathComponent("Migrations/functions")
        for file in try FileManager.default.contentsOfDirectory(atPath: functions.path) where file.hasSuffix(".sql") {
            texts["Migrations/functions/\(file)"] = try String(contentsOf: functions.appendingPathComponent(file), encoding: .utf8)
        }

        // Where each name is declared (its home targets) and which files declare or extend it.
        var homes: [String: Set<String>] = [:]
        var files: [String: Set<String>] = [:]
        let primary = #/^(?:@\w+\s+)*(?:\w+ )*(?:struct|enum|class|actor|protocol|typealias|func) ([A-Za-z_]\w*)/#
        let extended = #/^(?:public |internal |package )?extension ([A-Za-z_]\w*)/#
        let member = #/^    (?:@\w+\s+)*(?:public |internal |package )?(?:static )?(?:func|var) ([A-Za-z_]\w*)/#
        for (path, text) in texts where path.hasSuffix(".swift") {
            for line in text.split(separator: "\n") {
                if let name = line.firstMatch(of: primary)?.1 {
                    homes[String(name), default: []].insert(Self.target(path))
                    files[String(name), default: []].insert(path)
                }
            }
        }
        for (path, text) in texts where path.hasSuffix(".swift") && text.contains("extension ") {
            for line in text.split(separator: "\n") {
                if let name = line.firstMatch(of: extended)?.1, homes[String(name)] != nil {
                    files[String(name), default: []].insert(path)
                }
                // Extension members with names distinctive enough to follow (not `run`, `init`).
                if let name = line.firstMatch(of: member)?.1, name.count >= 6, name != "description" {
                    homes[String(name), default: []].insert(Self.target(path))
                    files[String(name), default: []].insert(path)
                }
            }
        }

        for (path, text) in texts {
            let swift = path.hasSuffix(".swift")
            let comment = swift ? "//" : "--"
            let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix(comment) }
                .joined(separator: "\n")
            var visible: Set<String> = [Self.target(path)]
            for match in text.matches(of: #/(?m)^(?:@testable )?import (\w+)/#) { visible.insert(String(match.1)) }
            var reached = Set<String>()
            for match in code.matches(of: #/[A-Za-z_]\w*/#) {
                let name = String(match.0)
                if swift, let declaredIn = homes[name]?.intersection(visible), !declaredIn.isEmpty {
                    reached.formUnion(
                        (files[name] ?? []).filter { declaredIn.contains(Self.target($0)) || Self.target($0) == Self.target(path) })
                }
                if name.hasPrefix("ledger_"), texts["Migrations/functions/\(name).sql"] != nil {
                    reached.insert("Migrations/functions/\(name).sql")
                }
            }
            reached.remove(path)
            uses[path] = reached
        }
    }

    static func target(_ path: String) -> String { String(path.prefix { $0 != "/" }) }

    /// `starts` and every file they reach, directly or not.
    func reached(from starts: [String]) -> Set<String> { Self.closure(starts, uses) }

    /// `starts` and every file that reaches them: their callers.
    func callers(of starts: [String]) -> Set<String> {
        var reverse: [String: Set<String>] = [:]
        for (file, used) in uses { for target in used { reverse[target, default: []].insert(file) } }
        return Self.closure(starts, reverse)
    }

    private static func closure(_ starts: [String], _ edges: [String: Set<String>]) -> Set<String> {
        var seen = Set(starts)
        var stack = starts
        while let file = stack.popLast() {
            for next in edges[file] ?? [] where seen.insert(next).inserted { stack.append(next) }
        }
        return seen
    }
}
