import Foundation

/// The auditor's console as files (Sources/LedgerConsole/Console): the page, its style sheet,
/// its ES modules and its icon, which `ConsoleController` serves. Static: the page holds no data
/// and reads the API with the token it is given.
public enum ConsoleFiles {
    /// The text of the console file `name`, if the bundle holds it.
    public static func text(_ name: String) -> String? {
        let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Console")
        return url.flatMap { try? String(contentsOf: $0, encoding: .utf8) }
    }
}
