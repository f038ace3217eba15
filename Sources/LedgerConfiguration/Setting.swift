import Foundation
import LedgerPostgres

/// One setting: its flag (if it has one), environment variable, default and meaning, and what
/// a valid value looks like. The default is written here once: `LedgerConfiguration` parses it
/// when the variable is unset, and docs/OPERATIONS.md's table shows it.
public struct Setting: Sendable {
    public enum Kind: Sendable {
        case text
        /// A whole number in the range.
        case count(ClosedRange<Int>)
        /// Seconds (a decimal number) in the range.
        case seconds(ClosedRange<Double>)
        /// 1/true/yes or 0/false/no.
        case yesNo
        case choice([String])
        /// An http or https URL.
        case httpURL
        /// A `postgres://` URL.
        case databaseURL
        /// At least this many bytes.
        case secret(minimumBytes: Int)
        /// Exactly one character, neither a letter nor a digit (a separator).
        case character
    }

    public let flag: String?
    public let variable: String
    /// The value when the variable is unset; nil: unset means what `unset` says.
    public let defaultValue: String?
    /// What an unset variable means, when it has no default value.
    public let unset: String?
    public let meaning: String
    public let kind: Kind

    public init(
        flag: String? = nil, _ variable: String, default defaultValue: String? = nil, unset: String? = nil, _ meaning: String, _ kind: Kind
    ) {
        self.flag = flag
        self.variable = variable
        self.defaultValue = defaultValue
        self.unset = unset
        self.meaning = meaning
        self.kind = kind
    }

    /// Its value in `environment` as set, nil when unset or empty (the default not applied, the
    /// value not checked): `LedgerConfiguration` reads every setting through this, and a process
    /// that starts the ledger's roles passes one on with it.
    public func value(in environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        environment[variable].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The table's default column.
    public var defaultText: String { defaultValue.map { "`\($0)`" } ?? unset ?? "unset" }

    /// A flag's `--help` text: `abstract` (else the meaning), then the variable and the default
    /// as written here, so `--help` and docs/OPERATIONS.md's table cannot disagree.
    public func help(_ abstract: String? = nil) -> String {
        let what = abstract ?? (meaning.prefix(1).uppercased() + String(meaning.dropFirst()))
        var otherwise = ""
        if let defaultValue {
            otherwise = ", default \(defaultValue)"
        } else if let unset {
            otherwise = unset.hasPrefix("unset: ") ? "; \(unset)" : ", default \(unset)"
        }
        return "\(what) (env \(variable)\(otherwise)).".replacingOccurrences(of: "`", with: "")
    }

    /// Why `value` is not a valid value of this setting; nil if it is.
    public func problem(with value: String) -> String? {
        let refused = "\(variable)='\(value)' is not "
        switch kind {
        case .text:
            return nil
        case .count(let range):
            guard let number = Int(value), range.contains(number) else {
                return refused + "a whole number from \(range.lowerBound) to \(range.upperBound)"
            }
        case .seconds(let range):
            guard let number = Double(value), number.isFinite, range.contains(number) else {
                return refused + "a number of seconds from \(Self.format(range.lowerBound)) to \(Self.format(range.upperBound))"
            }
        case .yesNo:
            guard Setting.yesNo(value) != nil else { return refused + "one of 1, true, yes, 0, false, no" }
        case .choice(let options):
            guard options.contains(value.lowercased()) else { return refused + "one of \(options.joined(separator: ", "))" }
        case .httpURL:
            guard let url = URLComponents(string: value), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                url.host?.isEmpty == false
            else { return refused + "an http or https URL" }
        case .databaseURL:
            // Not repeated: it may carry a password.
            do { _ = try DatabaseSettings(url: value) } catch { return "\(variable) is not a PostgreSQL URL: \(error)" }
        case .secret(let minimum):
            // The value itself is not repeated: it is a secret.
            guard value.utf8.count >= minimum else {
                return "\(variable) is \(value.utf8.count) bytes long; it must be at least \(minimum)"
            }
        case .character:
            guard value.count == 1, let character = value.first, !character.isLetter, !character.isNumber else {
                return refused + "one character other than a letter or a digit"
            }
        }
        return nil
    }

    static func yesNo(_ value: String) -> Bool? {
        switch value.lowercased() {
        case "1", "true", "yes": true
        case "0", "false", "no": false
        default: nil
        }
    }

    static func format(_ seconds: Double) -> String { seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds) }
}
