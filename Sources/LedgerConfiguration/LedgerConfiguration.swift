import Foundation

/// Every setting, read once at start into one typed value (`LedgerSettings` lists them with
/// their defaults). The roles read its fields; a command's flags overwrite the fields they set.
public struct LedgerConfiguration: Sendable {
    // HTTP
    public var host: String
    public var port: Int
    /// Base of universal links; nil: this server, `http://HOST:PORT`.
    public var publicBaseURL: String?
    public var bodyLimit: Int
    public var challengeLifetime: Duration
    public var verdictWait: Duration
    public var readWait: Duration
    public var shutdownDrain: Duration
    /// `LEDGER_FOLLOW_INTERVAL`: the least time between two steps of a worker that follows the log.
    public var followInterval: Duration
    public var webhooksAllowHTTP: Bool
    /// `LEDGER_WEBHOOKS_ALLOW_PRIVATE`: webhooks may reach non-public addresses (development, tests).
    public var webhooksAllowPrivate: Bool
    /// Proofs decided in one group (one commit).
    public var verifierGroup: Int
    // Database
    public var dataDir: String
    public var databaseURL: String?
    public var readDatabaseURL: String?
    /// `LEDGER_SHARD_CLUSTER`: the PL/Proxy cluster whose shards hold the collaborations.
    public var shardCluster: String?
    public var pgBin: String?
    // Tokens
    public var jwtSecret: String?
    public var jwksURL: String?
    public var jwksFile: String?
    public var jwtIssuer: String?
    public var jwtAudience: String?
    public var jwtAccountClaim: String
    public var jwtRolesClaim: String
    /// The one character between the roles of a roles claim written as one string; nil: only an
    /// array holds roles.
    public var jwtRolesSeparator: Character?
    // The console's sign-in through an identity provider (OpenID Connect)
    /// The provider's issuer; nil: the console takes a pasted token.
    public var oidcIssuer: String?
    public var oidcClientID: String?
    public var oidcScope: String
    /// An RFC 8707 resource indicator the console asks its tokens for; nil: none.
    public var oidcResource: String?
    // Logs
    public var logLevel: String
    public var jsonLogs: Bool
    // The verifiable log
    public var signingKeyFile: String?
    public var logOrigin: String?
    public var logKey: String?
    /// A witness policy file; nil: checkpoints are published as they are signed.
    public var witnessPolicy: String?
    /// The file keeping the last published checkpoint; nil: `published-checkpoint` in the data folder.
    public var checkpointFile: String?
    /// Entry bundles under /tlog without a token.
    public var publicEntries: Bool
    /// `serve` keeps the verifiable index and records its revisions (`LEDGER_INDEX`).
    public var index: Bool
    /// The ledger `ledger demo` drives; nil: one in the process.
    public var url: String?

    /// Every setting from `environment`, its default where unset; throws `LedgerSettings.Malformed`
    /// naming every malformed value and every setting missing beside another that needs it.
    public init(environment: [String: String]) throws {
        try LedgerSettings.check(environment)
        func value(_ setting: Setting) -> String? { setting.value(in: environment) ?? setting.defaultValue }
        func seconds(_ setting: Setting) -> Duration { .milliseconds(Int64(Double(value(setting)!)! * 1000)) }
        host = value(.host)!
        port = Int(value(.port)!)!
        publicBaseURL = value(.publicBaseURL)
        bodyLimit = Int(value(.bodyLimit)!)!
        challengeLifetime = seconds(.challengeTTL)
        verdictWait = seconds(.verdictWait)
        readWait = seconds(.readWait)
        shutdownDrain = seconds(.shutdownDrain)
        followInterval = seconds(.followInterval)
        webhooksAllowHTTP = Setting.yesNo(value(.webhooksAllowHTTP)!)!
        webhooksAllowPrivate = Setting.yesNo(value(.webhooksAllowPrivate)!)!
        verifierGroup = Int(value(.verifierGroup)!)!
        dataDir = value(.dataDir)!
        databaseURL = value(.databaseURL)
        readDatabaseURL = value(.readDatabaseURL)
        shardCluster = value(.shardCluster)
        pgBin = value(.pgBin)
        jwtSecret = value(.jwtSecret)
        jwksURL = value(.jwksURL)
        jwksFile = value(.jwksFile)
        jwtIssuer = value(.jwtIssuer)
        jwtAudience = value(.jwtAudience)
        jwtAccountClaim = value(.jwtAccountClaim)!
        jwtRolesClaim = value(.jwtRolesClaim)!
        jwtRolesSeparator = value(.jwtRolesSeparator)?.first
        oidcIssuer = value(.oidcIssuer)
        oidcClientID = value(.oidcClientID)
        oidcScope = value(.oidcScope)!
        oidcResource = value(.oidcResource)
        logLevel = value(.logLevel)!.lowercased()
        jsonLogs = value(.logFormat)!.lowercased() == "json"
        signingKeyFile = value(.signingKeyFile)
        logOrigin = value(.logOrigin)
        logKey = value(.logKey)
        witnessPolicy = value(.witnessPolicy)
        checkpointFile = value(.checkpointFile)
        publicEntries = Setting.yesNo(value(.publicEntries)!)!
        index = Setting.yesNo(value(.index)!)!
        url = value(.url)
    }

    /// The process's environment.
    public static func fromEnvironment() throws -> LedgerConfiguration {
        try LedgerConfiguration(environment: ProcessInfo.processInfo.environment)
    }

    /// Every default (tests, benchmarks, the demo's ledger in the process).
    public init() {
        // The defaults are valid values (a test reads them), so this cannot throw.
        try! self.init(environment: [:])
    }

    /// Where universal links point: the public base URL, else this server.
    public var baseURL: String { publicBaseURL ?? "http://\(host):\(port)" }

    /// The embedded cluster's data folder, relative to the working directory.
    public var dataDirectory: URL {
        URL(fileURLWithPath: dataDir, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).standardizedFileURL
    }

    /// Where the checkpointer keeps the last published checkpoint.
    public var checkpointFileURL: URL {
        checkpointFile.map {
            URL(fileURLWithPath: $0, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).standardizedFileURL
        }
            ?? dataDirectory.appendingPathComponent("published-checkpoint")
    }

    /// Whether the deployment's token keys are set (not a development secret).
    public var tokenKeysConfigured: Bool { jwtSecret != nil || jwksURL != nil || jwksFile != nil }

    /// The log's name in its checkpoints: `LEDGER_LOG_ORIGIN`, else the public base URL's host
    /// followed by `/ledger`.
    public var origin: String { logOrigin ?? ((URL(string: baseURL)?.host ?? "localhost") + "/ledger") }
}
