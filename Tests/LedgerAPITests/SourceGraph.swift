import Foundation

/// Which files of the package use which, by the names they mention (comments left out). A Swift
/// file uses the files that declare a type, free function or global it names (in its own target
/// or one it imports), and the files whose extension members it names: `T.member`, `x.member`
/// where the file gives `x` the type `T` (`x: T`, `x = T(…)`, `x as T`), `member(…)` within `T`
/// or an extension of it, `T(label:` for an extension's initializer, and `.member` on a value of
/// a type it does not know when no other type of the package declares a member of that name. A
/// type's own members come with its file; its extensions elsewhere are used through what they
/// declare, and a conformance alone (`extension T: P {}`) wherever its target names `T`. Swift and
/// SQL use the SQL function files (`Migrations/functions/ledger_….sql`) they name, and the function
/// files whose triggers fire on a table they write (`INSERT INTO t`, `UPDATE t`). A rough map
/// (names, not the compiler's symbols), but one that tells apart the files a way through the code
/// uses from the rest of the package.
struct SourceGraph {
    /// Paths as the architecture document writes them: `Target/File.swift`,
    /// `Migrations/functions/name.sql`.
    private(set) var uses: [String: Set<String>] = [:]
    /// The names by which a file uses another, keyed `from → to`.
    private var names: [String: Set<String>] = [:]

    /// A Swift file's declarations, read line by line: swift-format keeps top-level declarations
    /// at column 0 and their members at four spaces.
    private struct Declarations {
        /// Types, free functions and globals declared at the top level.
        var primary: Set<String> = []
        /// Types this file extends.
        var extended: Set<String> = []
        /// Types this file gives a conformance alone (`extension T: P {}`), used wherever `T` is.
        var conformances: Set<String> = []
        /// Members declared at four spaces, with the type whose declaration or extension holds
        /// them, and whether that is an extension.
        var members: [(name: String, type: String, inExtension: Bool)] = []
    }

    init(root: URL) throws {
        var texts: [String: String] = [:]
        let sources = root.appendingPathComponent("Sources")
        for target in try FileManager.default.contentsOfDirectory(atPath: sources.path) {
            let folder = sources.appendingPathComponent(target)
            for case let file as String in FileManager.default.enumerator(atPath: folder.path) ?? .init()
            where file.hasSuffix(".swift") {
                texts["\(target)/\(file)"] = Self.code(
                    try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8), comment: "//")
            }
        }
        let functions = root.appendingPathComponent("Migrations/functions")
        for file in try FileManager.default.contentsOfDirectory(atPath: functions.path) where file.hasSuffix(".sql") {
            texts["Migrations/functions/\(file)"] = Self.code(
                try String(contentsOf: functions.appendingPathComponent(file), encoding: .utf8), comment: "--")
        }

        // The triggers a function file puts on a table: whatever writes the table runs them.
        var triggers: [String: Set<String>] = [:]
        for (path, text) in texts where path.hasPrefix("Migrations/") {
            for match in text.matches(of: #/TRIGGER \w+\s+(?:BEFORE|AFTER)[A-Z ,]+ON (\w+)/#) {
                triggers[String(match.1), default: []].insert(path)
            }
        }

        var declarations: [String: Declarations] = [:]
        for (path, text) in texts where path.hasSuffix(".swift") { declarations[path] = Self.declarations(text) }
        // Name → the files that declare it at the top level; member name → (file, type) of the
        // extensions that declare it, and every type that declares a member of that name.
        var primary: [String: Set<String>] = [:]
        var extensionMembers: [String: [(file: String, type: String)]] = [:]
        var owners: [String: Set<String>] = [:]
        var conformances: [String: Set<String>] = [:]
        for (path, found) in declarations {
            for name in found.primary { primary[name, default: []].insert(path) }
            for name in found.conformances { conformances[name, default: []].insert(path) }
            for member in found.members {
                owners[member.name, default: []].insert(member.type)
                if member.inExtension { extensionMembers[member.name, default: []].append((path, member.type)) }
            }
        }

        for (path, text) in texts {
            var reached = Set<String>()
            if path.hasSuffix(".swift") {
                let own = declarations[path] ?? .init()
                let types = own.primary.union(own.extended)
                var visible: Set<String> = [Self.target(path)]
                for match in text.matches(of: #/(?m)^(?:@testable |public |internal |package )?import (\w+)/#) {
                    visible.insert(String(match.1))
                }
                // The types the file gives its names (`store: EventStore`, `let tree = LogTree(…)`).
                var typed: [String: Set<String>] = [:]
                for match in text.matches(of: #/([a-z_]\w*)\s*:\s*\[?([A-Z]\w*)/#) {
                    typed[String(match.1), default: []].insert(String(match.2))
                }
                for match in text.matches(of: #/([a-z_]\w*)\s*=\s*(?:try\s+)?(?:await\s+)?([A-Z]\w*)\(/#) {
                    typed[String(match.1), default: []].insert(String(match.2))
                }
                for match in text.matches(of: #/([a-z_]\w*)\s+as[?!]?\s+(?:any\s+)?([A-Z]\w*)/#) {
                    typed[String(match.1), default: []].insert(String(match.2))
                }
                // A conformance alone (`extension T: P {}`) is reached through `T`; it uses nothing.
                let body = text.split(separator: "\n").filter { !($0.hasPrefix("extension ") && $0.hasSuffix(" {}")) }
                    .joined(separator: "\n")
                let tokens = body.matches(of: #/[A-Za-z_]\w*|\S/#).map { String($0.0) }
                for (index, name) in tokens.enumerated() where name.first!.isLetter || name.first == "_" {
                    let dotted = index > 0 && tokens[index - 1] == "."
                    var receiver: String?
                    if dotted, index > 1 {
                        let before = ["?", "!"].contains(tokens[index - 2]) && index > 2 ? tokens[index - 3] : tokens[index - 2]
                        if before.first!.isLetter || before.first == "_" { receiver = before }
                    }
                    let called = index + 1 < tokens.count && tokens[index + 1] == "("
                    // `T(label:` or `.init(label:`: an initializer an extension of `T` may declare.
                    if called, index + 3 < tokens.count, tokens[index + 3] == ":" {
                        let type = name == "init" && dotted ? receiver : (name.first!.isUppercase ? name : nil)
                        for member in extensionMembers["init:" + tokens[index + 2]] ?? []
                        where member.type == type || (type == nil && name == "init" && types.contains(member.type)) {
                            reached.insert(member.file)
                            names["\(path) → \(member.file)", default: []].insert("\(name)(\(tokens[index + 2]):")
                        }
                    }
                    if !dotted {
                        for file in primary[name] ?? [] where visible.contains(Self.target(file)) {
                            reached.insert(file)
                            names["\(path) → \(file)", default: []].insert(name)
                        }
                        // A conformance given in this target is used with its type (an answer encoded).
                        for file in conformances[name] ?? [] where Self.target(file) == Self.target(path) {
                            reached.insert(file)
                            names["\(path) → \(file)", default: []].insert(name + ": its conformance")
                        }
                    }
                    for member in extensionMembers[name] ?? [] where visible.contains(Self.target(member.file)) {
                        let type = member.type
                        let uses: Bool
                        if !dotted {
                            uses = types.contains(type) && (called || name.first!.isUppercase)
                        } else if let receiver, receiver == type || typed[receiver]?.contains(type) == true {
                            uses = true
                        } else if let receiver, ["self", "Self"].contains(receiver) {
                            uses = types.contains(type)
                        } else if let receiver, receiver.first!.isUppercase || typed[receiver] != nil {
                            uses = false  // another type's member
                        } else {
                            uses = owners[name] == [type]
                        }
                        if uses {
                            reached.insert(member.file)
                            names["\(path) → \(member.file)", default: []].insert("." + name)
                        }
                    }
                }
            }
            for match in text.matches(of: #/ledger_\w+/#) {
                let function = "Migrations/functions/\(match.0).sql"
                if texts[function] != nil {
                    reached.insert(function)
                    names["\(path) → \(function)", default: []].insert(String(match.0))
                }
            }
            for match in text.matches(of: #/(?:INSERT INTO|UPDATE) (\w+)/#) {
                for function in triggers[String(match.1)] ?? [] {
                    reached.insert(function)
                    names["\(path) → \(function)", default: []].insert("its trigger on \(match.1)")
                }
            }
            reached.remove(path)
            uses[path] = reached
        }
    }

    /// `text` without its comments: whole comment lines, and a comment after code (`x // why`).
    static func code(_ text: String, comment: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).compactMap { line -> Substring? in
            if line.trimmingCharacters(in: .whitespaces).hasPrefix(comment) { return nil }
            if let trailing = line.range(of: " \(comment) ") { return line[..<trailing.lowerBound] }
            return line
        }.joined(separator: "\n")
    }

    private static func declarations(_ text: String) -> Declarations {
        let modifiers =
            #"(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|internal|package|fileprivate|private|final|static|class|nonisolated|indirect|mutating|override|convenience|required)\s+)*"#
        let topLevel = try! Regex("^\(modifiers)(struct|enum|class|actor|protocol|typealias|func|let|var) +([A-Za-z_]\\w*)")
        let extensionLine = try! Regex("^\(modifiers)extension +([A-Za-z_][\\w.]*)")
        let member = try! Regex("^    \(modifiers)(?:struct|enum|class|actor|typealias|func|let|var|case) +([A-Za-z_]\\w*)")
        let initializer = try! Regex("^    \(modifiers)init[?!]?\\((\\w+)")
        var found = Declarations()
        var owner: (type: String, inExtension: Bool)?
        for line in text.split(separator: "\n") {
            guard let first = line.first, first != " ", first != "}", first != "#" else {
                if let owner, let name = (try? member.firstMatch(in: line))??.output[1].substring {
                    found.members.append((String(name), owner.type, owner.inExtension))
                }
                if let owner, owner.inExtension, let label = (try? initializer.firstMatch(in: line))??.output[1].substring {
                    found.members.append(("init:" + label, owner.type, true))
                }
                continue
            }
            owner = nil
            if let name = (try? extensionLine.firstMatch(in: line))??.output[1].substring {
                // `extension A.B`: its members are found by their names, as A's.
                let type = String(name.split(separator: ".").first ?? name)
                found.extended.insert(type)
                if line.hasSuffix(" {}") { found.conformances.insert(type) }
                owner = (type, true)
            } else if let match = (try? topLevel.firstMatch(in: line)) ?? nil,
                let kind = match.output[1].substring, let name = match.output[2].substring
            {
                found.primary.insert(String(name))
                if ["struct", "enum", "class", "actor", "protocol"].contains(kind) { owner = (String(name), false) }
            }
        }
        return found
    }

    static func target(_ path: String) -> String {
        path.hasPrefix("Migrations/") ? "Migrations" : String(path.prefix { $0 != "/" })
    }

    /// `starts` and every file they reach, directly or not.
    func reached(from starts: [String]) -> Set<String> { Self.closure(starts, uses) { _ in true } }

    /// The files a way through the code reaches, each with the file it was reached from (nil for
    /// an entry point): from its `entries`, following what each file uses into the files of the
    /// targets it runs `through` (`Migrations`: the SQL functions) and the `plumbing` files those
    /// use, which are not followed further. A file the way uses only in part (`partly`) is not
    /// followed either: of the files it uses, those the way `names` are.
    func reached(
        from entries: [String], through: Set<String>, plumbing: Set<String>, partly: Set<String>, names: Set<String>
    ) -> [String: String?] {
        func onTheWay(_ file: String) -> Bool {
            through.contains(Self.target(file)) || plumbing.contains(Self.target(file))
        }
        var seen: [String: String?] = [:]
        for entry in entries { seen[entry] = .some(nil) }
        for file in partly {
            for used in uses[file] ?? [] where names.contains(used) && onTheWay(used) && seen[used] == nil { seen[used] = file }
        }
        var stack = Array(seen.keys)
        while let file = stack.popLast() {
            guard !partly.contains(file), entries.contains(file) || through.contains(Self.target(file)) else { continue }
            for next in uses[file] ?? [] where onTheWay(next) && seen[next] == nil {
                seen[next] = file
                stack.append(next)
            }
        }
        return seen
    }

    /// The names by which `file` uses `used`, for a failure's message.
    func why(_ file: String, uses used: String) -> String {
        (names["\(file) → \(used)"] ?? []).sorted().joined(separator: ", ")
    }

    /// `starts` and every file that reaches them: their callers.
    func callers(of starts: [String]) -> Set<String> {
        var reverse: [String: Set<String>] = [:]
        for (file, used) in uses { for target in used { reverse[target, default: []].insert(file) } }
        return Self.closure(starts, reverse) { _ in true }
    }

    private static func closure(_ starts: [String], _ edges: [String: Set<String>], _ follow: (String) -> Bool) -> Set<String> {
        var seen = Set(starts)
        var stack = starts
        while let file = stack.popLast() {
            for next in edges[file] ?? [] where follow(next) && seen.insert(next).inserted { stack.append(next) }
        }
        return seen
    }
}
