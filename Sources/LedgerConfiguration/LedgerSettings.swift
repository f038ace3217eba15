/// Every setting of the ledger, in one list: `LedgerConfiguration` reads them, every role
/// refuses to start while one is malformed (naming the variable and the value), and the
/// configuration table of docs/OPERATIONS.md is `markdownTable` (a test keeps the two equal).
public enum LedgerSettings {
    public static let all: [Setting] = [
        .host, .port, .dataDir, .databaseURL, .readDatabaseURL, .shardCluster, .jwtSecret, .jwksURL, .jwksFile, .jwtIssuer, .jwtAudience,
        .jwtAccountClaim, .jwtRolesClaim, .jwtRolesSeparator, .oidcIssuer, .oidcClientID, .oidcScope, .oidcResource, .publicBaseURL,
        .bodyLimit, .challengeTTL,
        .verdictWait, .readWait, .shutdownDrain, .followInterval,
        .verifierGroup, .webhooksAllowHTTP, .webhooksAllowPrivate, .logLevel, .logFormat, .pgBin, .signingKeyFile, .logOrigin,
        .witnessPolicy, .checkpointFile, .publicEntries, .index, .logKey, .url,
    ]

    public struct Malformed: Error, CustomStringConvertible {
        public var problems: [String]
        public var description: String { "refusing to start: " + problems.joined(separator: "; ") }
    }

    /// Every problem of the settings set in `environment`, in one error: each value's, then
    /// those of settings that need another (`requirements`).
    public static func check(_ environment: [String: String]) throws {
        let problems =
            all.compactMap { setting in setting.value(in: environment).flatMap { setting.problem(with: $0) } }
            + requirements(environment)
        if !problems.isEmpty { throw Malformed(problems: problems) }
    }

    /// Settings that are valid alone but not together. An identity provider's keys
    /// (`LEDGER_JWKS_URL`, `LEDGER_JWKS_FILE`) need the audience its tokens for this ledger carry:
    /// without it, a token the provider issued for any other application would be accepted. The
    /// console's sign-in through a provider (`LEDGER_OIDC_ISSUER`) needs its client id, the
    /// provider's keys (with the development secret alone every token it brings back is refused)
    /// and the issuer its access tokens carry (`LEDGER_JWT_ISSUER`: a provider's keys may sign for
    /// others too); and the console's client id must not be the ledger's audience, or the ID
    /// tokens the provider issues the console would carry the audience the ledger checks.
    static func requirements(_ environment: [String: String]) -> [String] {
        func isSet(_ setting: Setting) -> Bool {
            environment[setting.variable].map { !$0.allSatisfy(\.isWhitespace) } ?? false
        }
        var problems: [String] = []
        if isSet(.jwksURL) || isSet(.jwksFile), !isSet(.jwtAudience) {
            let provider = [Setting.jwksURL, .jwksFile].filter(isSet).map(\.variable).joined(separator: " and ")
            problems.append(
                "\(provider) is set but LEDGER_JWT_AUDIENCE is not: with an identity provider's keys every token must carry this ledger's audience, so one issued for another application is refused"
            )
        }
        if isSet(.oidcIssuer) != isSet(.oidcClientID) {
            problems.append(
                "LEDGER_OIDC_ISSUER and LEDGER_OIDC_CLIENT_ID go together: set both (the provider, and the console's client id there) or neither (the console then takes a pasted token)"
            )
        }
        if isSet(.oidcIssuer), !isSet(.jwksURL), !isSet(.jwksFile) {
            problems.append(
                "LEDGER_OIDC_ISSUER is set but neither LEDGER_JWKS_URL nor LEDGER_JWKS_FILE: set LEDGER_JWKS_URL to the provider's jwks_uri, or the ledger refuses every token the console brings back from it"
            )
        }
        if isSet(.oidcIssuer), !isSet(.jwtIssuer) {
            problems.append(
                "LEDGER_OIDC_ISSUER is set but LEDGER_JWT_ISSUER is not: set LEDGER_JWT_ISSUER to the iss of the access tokens the provider issues the console (usually LEDGER_OIDC_ISSUER itself), so the ledger takes that issuer's tokens alone (a provider's keys may sign for other issuers too: Entra ID's sign every tenant's)"
            )
        }
        // Compared as written: the token authority compares a token's aud with the setting so.
        if let client = Setting.oidcClientID.value(in: environment), client == Setting.jwtAudience.value(in: environment) {
            problems.append(
                "LEDGER_OIDC_CLIENT_ID and LEDGER_JWT_AUDIENCE are both '\(client)': the ID tokens the provider issues the console carry that audience too, so they could pass for access tokens. Register the ledger's API with the provider separately, with an audience of its own (Entra ID: a second app registration that exposes a scope), set LEDGER_JWT_AUDIENCE to that audience, and have the console ask for it (LEDGER_OIDC_SCOPE, or LEDGER_OIDC_RESOURCE)"
            )
        }
        if let scope = Setting.oidcScope.value(in: environment), !scope.split(separator: " ").contains("openid") {
            problems.append("LEDGER_OIDC_SCOPE='\(scope)' lacks openid: OpenID Connect sign-in needs it among the scopes")
        }
        return problems
    }

    /// The configuration table of docs/OPERATIONS.md.
    public static var markdownTable: String {
        let rows = all.map { "| \($0.flag.map { "`\($0)`" } ?? "") | `\($0.variable)` | \($0.defaultText) | \($0.meaning) |" }
        return (["| flag | environment | default | what |", "|---|---|---|---|"] + rows).joined(separator: "\n") + "\n"
    }
}

extension Setting {
    public static let host = Setting(flag: "--host", "LEDGER_HOST", default: "127.0.0.1", "listen address", .text)
    public static let port = Setting(flag: "--port", "LEDGER_PORT", default: "8080", "listen port", .count(0...65535))
    public static let dataDir = Setting(
        flag: "--data-dir", "LEDGER_DATA_DIR", default: "./.ledger", "embedded cluster and development secrets", .text)
    public static let databaseURL = Setting(
        flag: "--database-url", "LEDGER_DATABASE_URL", unset: "unset: embedded", "`postgres://user:pass@host:5432/db?sslmode=disable`",
        .databaseURL)
    public static let readDatabaseURL = Setting(
        "LEDGER_READ_DATABASE_URL", unset: "unset: reads on the primary",
        "a streaming-replication hot standby for the reads (`minPosition` reads it cannot serve go to the primary)", .databaseURL)
    public static let shardCluster = Setting(
        flag: "--shard-cluster", "LEDGER_SHARD_CLUSTER", unset: "unset: one database holds everything",
        "`serve` only (the other roles refuse to start with it): the PL/Proxy cluster (a foreign server defined in the database) whose shards hold the collaborations; `ledger shards init` makes one (docs/SCALING.md)",
        .text)
    public static let jwtSecret = Setting(
        "LEDGER_JWT_SECRET", unset: "generated in the data folder (`serve` only)", "HS256 secret, at least 32 bytes",
        .secret(minimumBytes: 32))
    public static let jwksURL = Setting(
        "LEDGER_JWKS_URL",
        "the identity provider's keys (JWKS): RS256, ES256 and EdDSA tokens instead of HS256; fetched at start and on an unknown `kid`, at most once a minute",
        .httpURL)
    public static let jwksFile = Setting("LEDGER_JWKS_FILE", "the same keys from a file, read at start", .text)
    public static let jwtIssuer = Setting(
        "LEDGER_JWT_ISSUER", unset: "unset: not checked",
        "the `iss` every token must carry; required with `LEDGER_OIDC_ISSUER` (every role refuses to start without it)", .text)
    public static let jwtAudience = Setting(
        "LEDGER_JWT_AUDIENCE", unset: "unset: not checked (HS256 only)",
        "an `aud` every token must carry; required with `LEDGER_JWKS_URL` or `LEDGER_JWKS_FILE` (every role refuses to start without it)",
        .text)
    public static let jwtAccountClaim = Setting("LEDGER_JWT_ACCOUNT_CLAIM", default: "sub", "the claim that holds the account", .text)
    public static let jwtRolesClaim = Setting(
        "LEDGER_JWT_ROLES_CLAIM", default: "roles",
        "the claim that holds the roles (an array of strings, or one string with `LEDGER_JWT_ROLES_SEPARATOR`; `auditor` reads the audit, `privacy` erases and exports personal data)",
        .text)
    public static let jwtRolesSeparator = Setting(
        "LEDGER_JWT_ROLES_SEPARATOR", unset: "unset: an array only",
        "for providers that write the roles claim as one string (glewlwyd: `,`): the one character between its roles, each taken exactly as written (nothing trimmed); unset, a string claim gives no role",
        .character)
    public static let oidcIssuer = Setting(
        "LEDGER_OIDC_ISSUER", unset: "unset: the console takes a pasted token",
        "the identity provider the console signs in through (OpenID Connect, code flow with PKCE): its issuer, whose `/.well-known/openid-configuration` the page reads; with `LEDGER_OIDC_CLIENT_ID` and the provider's keys (`LEDGER_JWKS_URL`)",
        .httpURL)
    public static let oidcClientID = Setting(
        "LEDGER_OIDC_CLIENT_ID",
        "the console's client id at that provider: a public client (no secret) whose redirect URI is the console's own address, `https://HOST/console`",
        .text)
    public static let oidcScope = Setting(
        "LEDGER_OIDC_SCOPE", default: "openid",
        "the scopes the console asks the provider for, space-separated, `openid` among them (Entra ID: add the ledger API's scope, so the access token is issued for it)",
        .text)
    public static let oidcResource = Setting(
        "LEDGER_OIDC_RESOURCE", unset: "unset: none asked",
        "an RFC 8707 resource indicator the console asks its tokens for, for providers that set `aud` from it (glewlwyd): the ledger's `LEDGER_JWT_AUDIENCE`",
        .text)
    public static let publicBaseURL = Setting(
        flag: "--public-base-url", "LEDGER_PUBLIC_BASE_URL", unset: "`http://HOST:PORT`", "base of universal links", .httpURL)
    public static let bodyLimit = Setting("LEDGER_BODY_LIMIT", default: "1048576", "request body limit in bytes", .count(1024...(1 << 30)))
    public static let challengeTTL = Setting("LEDGER_CHALLENGE_TTL", default: "120", "challenge lifetime in seconds", .seconds(1...86_400))
    public static let verdictWait = Setting(
        "LEDGER_VERDICT_WAIT", default: "5", "seconds a proof submission waits for a verifier's verdict before 202", .seconds(0...600))
    public static let readWait = Setting(
        "LEDGER_READ_WAIT", default: "2",
        "seconds a read waits for the views to reach its `minPosition`; still behind then: 503 `view_behind` with `Retry-After`",
        .seconds(0...600))
    public static let shutdownDrain = Setting(
        "LEDGER_SHUTDOWN_DRAIN", default: "0",
        "seconds after SIGTERM during which `/ready` answers 503 and everything else is still served (your load balancer's time to notice)",
        .seconds(0...20))
    public static let followInterval = Setting(
        "LEDGER_FOLLOW_INTERVAL", default: "0.005",
        "seconds between two steps of a worker that follows the log (projectors, the change feed's tail, webhook deliveries) while events keep coming: a step takes every event since the last, and the first event after a quiet interval is taken at once; longer costs less CPU per event while events come faster than the interval, and a read's `minPosition`, the feed and webhooks wait up to this much longer",
        .seconds(0...1))
    public static let verifierGroup = Setting(
        flag: "--verifier-concurrency", "LEDGER_VERIFIER_CONCURRENCY", default: "64",
        "proofs decided in one group (one commit), by the API of `ledger serve` or a verifier worker", .count(1...256))
    public static let webhooksAllowHTTP = Setting(
        "LEDGER_WEBHOOKS_ALLOW_HTTP", default: "no", "`yes`: webhook URLs may be plain http (development, tests); otherwise https only",
        .yesNo)
    public static let webhooksAllowPrivate = Setting(
        "LEDGER_WEBHOOKS_ALLOW_PRIVATE", default: "no",
        "`yes`: webhook URLs may resolve to loopback, private, link-local and other non-public addresses (development, tests); otherwise refused at registration and at each delivery",
        .yesNo)
    public static let logLevel = Setting(
        "LEDGER_LOG_LEVEL", default: "info", "least severe level logged",
        .choice(["trace", "debug", "info", "notice", "warning", "error", "critical"]))
    public static let logFormat = Setting(
        "LEDGER_LOG_FORMAT", default: "text", "`json`: one JSON object per log line (with the request's id), for log shippers",
        .choice(["text", "json"]))
    public static let pgBin = Setting(
        "LEDGER_PG_BIN", unset: "newest `/usr/lib/postgresql/*/bin`", "PostgreSQL binaries for the embedded cluster", .text)
    public static let signingKeyFile = Setting(
        "LEDGER_SIGNING_KEY_FILE", unset: "generated in the data folder",
        "checkpoint signing key (`ledger log keygen`); its name must be the origin", .text)
    public static let logOrigin = Setting(
        "LEDGER_LOG_ORIGIN", unset: "host of the public base URL + `/ledger`", "the log's name in its checkpoints", .text)
    public static let witnessPolicy = Setting(
        "LEDGER_WITNESS_POLICY", unset: "unset: published as signed",
        "a witness policy file (C2SP `tlog-policy`): checkpoints are published once its quorum has cosigned them", .text)
    public static let checkpointFile = Setting(
        "LEDGER_CHECKPOINT_FILE", unset: "`published-checkpoint` in the data folder",
        "the latest checkpoint the checkpointer signed, written before any witness sees it and kept outside the database: one of the records (with the database's and the witnesses') it never signs a tree below; keep it on a durable volume",
        .text)
    public static let publicEntries = Setting(
        "LEDGER_PUBLIC_ENTRIES", default: "no", "`yes`: `/tlog/tile/entries/…` needs no token; otherwise an auditor's", .yesNo)
    public static let index = Setting(
        "LEDGER_INDEX", default: "yes",
        "`yes`: `serve` folds the log into the verifiable index and records a revision in the log about once a second while it grows (`GET /v1/audit/lookup`)",
        .yesNo)
    public static let logKey = Setting(
        flag: "--key", "LEDGER_LOG_KEY", "verifier key for `log verify --checkpoint` and `audit verify`", .text)
    public static let url = Setting(
        flag: "--url", "LEDGER_URL", unset: "unset: a ledger in the process", "the ledger `ledger demo` drives", .httpURL)
}
