import Foundation

/// Every setting of the ledger, in one list: the CLI reads and checks them through it, every
/// role refuses to start while one is malformed (naming the variable and the value), and the
/// README's configuration table is `markdownTable` (a test keeps the two equal).
public enum LedgerSettings {
    public static let all: [Setting] = [
        Setting(flag: "--host", variable: "LEDGER_HOST", defaultText: "`127.0.0.1`", meaning: "listen address", kind: .text),
        Setting(flag: "--port", variable: "LEDGER_PORT", defaultText: "`8080`", meaning: "listen port", kind: .count(0...65535)),
        Setting(
            flag: "--data-dir", variable: "LEDGER_DATA_DIR", defaultText: "`./.ledger`",
            meaning: "embedded cluster and development secrets", kind: .text),
        Setting(
            flag: "--database-url", variable: "LEDGER_DATABASE_URL", defaultText: "unset: embedded",
            meaning: "`postgres://user:pass@host:5432/db?sslmode=disable`", kind: .databaseURL),
        Setting(
            flag: nil, variable: "LEDGER_READ_DATABASE_URL", defaultText: "unset: reads on the primary",
            meaning: "a streaming-replication hot standby for the reads (`minPosition` reads it cannot serve go to the primary)",
            kind: .databaseURL),
        Setting(
            flag: nil, variable: "LEDGER_JWT_SECRET", defaultText: "generated in the data folder (`serve` only)",
            meaning: "HS256 secret, at least 32 bytes", kind: .secret(minimumBytes: 32)),
        Setting(
            flag: nil, variable: "LEDGER_JWKS_URL", defaultText: "unset",
            meaning: "the identity provider's keys (JWKS): RS256, ES256 and EdDSA tokens instead of HS256; fetched at start and on an unknown `kid`, at most once a minute",
            kind: .httpURL),
        Setting(
            flag: nil, variable: "LEDGER_JWKS_FILE", defaultText: "unset", meaning: "the same keys from a file, read at start",
            kind: .text),
        Setting(flag: nil, variable: "LEDGER_JWT_ISSUER", defaultText: "unset: not checked", meaning: "the `iss` every token must carry", kind: .text),
        Setting(
            flag: nil, variable: "LEDGER_JWT_AUDIENCE", defaultText: "unset: not checked", meaning: "an `aud` every token must carry",
            kind: .text),
        Setting(
            flag: nil, variable: "LEDGER_JWT_ACCOUNT_CLAIM", defaultText: "`sub`", meaning: "the claim that holds the account",
            kind: .text),
        Setting(
            flag: nil, variable: "LEDGER_JWT_ROLES_CLAIM", defaultText: "`roles`",
            meaning: "the claim that holds the roles (an array; `auditor` reads the audit)", kind: .text),
        Setting(
            flag: "--public-base-url", variable: "LEDGER_PUBLIC_BASE_URL", defaultText: "`http://HOST:PORT`",
            meaning: "base of universal links", kind: .httpURL),
        Setting(
            flag: nil, variable: "LEDGER_BODY_LIMIT", defaultText: "`1048576`", meaning: "request body limit in bytes",
            kind: .count(1024...(1 << 30))),
        Setting(
            flag: nil, variable: "LEDGER_CHALLENGE_TTL", defaultText: "`120`", meaning: "challenge lifetime in seconds",
            kind: .seconds(1...86_400)),
        Setting(
            flag: nil, variable: "LEDGER_VERDICT_WAIT", defaultText: "`5`",
            meaning: "seconds a proof submission waits for a verifier's verdict before 202", kind: .seconds(0...600)),
        Setting(
            flag: nil, variable: "LEDGER_READ_WAIT", defaultText: "`2`",
            meaning: "seconds a read waits for the views to reach its `minPosition`; still behind then: 503 `view_behind` with `Retry-After`",
            kind: .seconds(0...600)),
        Setting(
            flag: nil, variable: "LEDGER_SHUTDOWN_DRAIN", defaultText: "`0`",
            meaning: "seconds after SIGTERM during which `/ready` answers 503 and everything else is still served (your load balancer's time to notice)",
            kind: .seconds(0...20)),
        Setting(
            flag: "--verifier-concurrency", variable: "LEDGER_VERIFIER_CONCURRENCY", defaultText: "`8`",
            meaning: "requests one verifier process decides at once", kind: .count(1...256)),
        Setting(
            flag: nil, variable: "LEDGER_WEBHOOKS_ALLOW_HTTP", defaultText: "`no`",
            meaning: "`yes`: webhook URLs may be plain http (development, tests); otherwise https only", kind: .yesNo),
        Setting(
            flag: nil, variable: "LEDGER_LOG_LEVEL", defaultText: "`info`", meaning: "least severe level logged",
            kind: .choice(["trace", "debug", "info", "notice", "warning", "error", "critical"])),
        Setting(
            flag: nil, variable: "LEDGER_LOG_FORMAT", defaultText: "`text`",
            meaning: "`json`: one JSON object per log line (with the request's id), for log shippers", kind: .choice(["text", "json"])),
        Setting(
            flag: nil, variable: "LEDGER_PG_BIN", defaultText: "newest `/usr/lib/postgresql/*/bin`",
            meaning: "PostgreSQL binaries for the embedded cluster", kind: .text),
        Setting(
            flag: nil, variable: "LEDGER_SIGNING_KEY_FILE", defaultText: "generated in the data folder",
            meaning: "checkpoint signing key (`ledger log keygen`); its name must be the origin", kind: .text),
        Setting(
            flag: nil, variable: "LEDGER_LOG_ORIGIN", defaultText: "host of the public base URL + `/ledger`",
            meaning: "the log's name in its checkpoints", kind: .text),
        Setting(
            flag: "--key", variable: "LEDGER_LOG_KEY", defaultText: "unset",
            meaning: "verifier key for `log verify --checkpoint` and `audit verify`", kind: .text),
        Setting(flag: "--url", variable: "LEDGER_URL", defaultText: "unset: a ledger in the process", meaning: "the ledger `ledger demo` drives", kind: .httpURL),
    ]

    public static func named(_ variable: String) -> Setting {
        guard let setting = all.first(where: { $0.variable == variable }) else { preconditionFailure("\(variable) is not in LedgerSettings.all") }
        return setting
    }

    public struct Malformed: Error, CustomStringConvertible {
        public var problems: [String]
        public var description: String { "refusing to start: " + problems.joined(separator: "; ") }
    }

    /// Every problem of the settings set in `environment`, in one error.
    public static func check(_ environment: [String: String]) throws {
        let problems = all.compactMap { setting in environment[setting.variable].flatMap { $0.isEmpty ? nil : setting.problem(with: $0) } }
        if !problems.isEmpty { throw Malformed(problems: problems) }
    }

    /// The README's configuration table.
    public static var markdownTable: String {
        let rows = all.map { "| \($0.flag.map { "`\($0)`" } ?? "") | `\($0.variable)` | \($0.defaultText) | \($0.meaning) |" }
        return (["| flag | environment | default | what |", "|---|---|---|---|"] + rows).joined(separator: "\n") + "\n"
    }
}

extension LedgerSettings {
    /// The typed values, read from the process's environment once `check` has passed (a value
    /// that does not parse reads as unset).
    public static func value(_ variable: String) -> String? {
        _ = named(variable)
        guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else { return nil }
        return value
    }

    public static func count(_ variable: String) -> Int? { value(variable).flatMap { Int($0) } }

    public static func seconds(_ variable: String) -> Duration? {
        value(variable).flatMap(Double.init).map { .milliseconds(Int64($0 * 1000)) }
    }

    public static func yes(_ variable: String) -> Bool { value(variable).flatMap(Setting.yesNo) ?? false }
}
