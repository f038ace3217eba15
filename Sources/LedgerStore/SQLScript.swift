import Foundation

/// Splits a SQL script into statements, as PostgresNIO runs one statement per query.
/// Understands quoted strings and identifiers, dollar-quoted bodies and comments, so a
/// semicolon inside a function body does not end the statement.
public enum SQLScript {
    /// How many functions and procedures `script` defines (its `CREATE OR REPLACE FUNCTION` and
    /// `PROCEDURE` statements, comment lines aside): a function file's overloads.
    public static func definitions(_ script: String) -> Int {
        statements(script).filter { statement in
            let code = statement.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("--") }.joined(
                separator: "\n")
            return code.hasPrefix("CREATE OR REPLACE FUNCTION ") || code.hasPrefix("CREATE OR REPLACE PROCEDURE ")
        }.count
    }

    public static func statements(_ script: String) -> [String] {
        let chars = Array(script.unicodeScalars)
        var statements: [String] = []
        var current = String.UnicodeScalarView()
        var i = 0
        func flush() {
            let text = String(current).trimmingCharacters(in: .whitespacesAndNewlines)
            if !text.isEmpty && !isOnlyComments(text) { statements.append(text) }
            current = String.UnicodeScalarView()
        }
        while i < chars.count {
            let c = chars[i]
            let next: Unicode.Scalar? = i + 1 < chars.count ? chars[i + 1] : nil
            if c == "-" && next == "-" {
                while i < chars.count && chars[i] != "\n" {
                    current.append(chars[i])
                    i += 1
                }
                continue
            }
            if c == "/" && next == "*" {
                while i < chars.count && !(chars[i] == "*" && i + 1 < chars.count && chars[i + 1] == "/") {
                    current.append(chars[i])
                    i += 1
                }
                if i < chars.count {
                    current.append("*")
                    current.append("/")
                    i += 2
                }
                continue
            }
            if c == "'" || c == "\"" {
                current.append(c)
                i += 1
                while i < chars.count {
                    current.append(chars[i])
                    if chars[i] == c {
                        if i + 1 < chars.count && chars[i + 1] == c {
                            i += 1
                            current.append(chars[i])
                        } else {
                            break
                        }
                    }
                    i += 1
                }
                i += 1
                continue
            }
            if c == "$", let tag = dollarTag(chars, at: i) {
                current.append(contentsOf: tag.unicodeScalars)
                i += tag.unicodeScalars.count
                let tagScalars = Array(tag.unicodeScalars)
                while i < chars.count {
                    if chars[i] == "$" && Array(chars[i..<min(chars.count, i + tagScalars.count)]) == tagScalars {
                        current.append(contentsOf: tag.unicodeScalars)
                        i += tagScalars.count
                        break
                    }
                    current.append(chars[i])
                    i += 1
                }
                continue
            }
            if c == ";" {
                flush()
                i += 1
                continue
            }
            current.append(c)
            i += 1
        }
        flush()
        return statements
    }

    /// `$tag$` or `$$` starting at `i`, if there is one.
    private static func dollarTag(_ chars: [Unicode.Scalar], at i: Int) -> String? {
        var j = i + 1
        while j < chars.count, chars[j] == "_" || chars[j].properties.isAlphabetic || (j > i + 1 && ("0"..."9").contains(chars[j])) {
            j += 1
        }
        guard j < chars.count, chars[j] == "$" else { return nil }
        return String(String.UnicodeScalarView(chars[i...j]))
    }

    private static func isOnlyComments(_ text: String) -> Bool {
        text.split(separator: "\n").allSatisfy {
            $0.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("--") || $0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        }
    }
}
