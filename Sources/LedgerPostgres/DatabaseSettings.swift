import Foundation
import Logging
import PostgresNIO

/// Where the ledger's PostgreSQL is and how to log in; parsed from `LEDGER_DATABASE_URL`
/// (`postgres://user:password@host:port/database?sslmode=disable|prefer|require`).
public struct DatabaseSettings: Sendable, Equatable, CustomStringConvertible {
    public enum TLSMode: String, Sendable { case disable, prefer, require }

    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    public var tls: TLSMode

    public init(host: String, port: Int, username: String, password: String?, database: String, tls: TLSMode = .disable) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.tls = tls
    }

    public struct InvalidURL: Error, CustomStringConvertible {
        public var description: String
    }

    public init(url string: String) throws {
        guard let components = URLComponents(string: string),
            let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme)
        else { throw InvalidURL(description: "database URL must look like postgres://user:password@host:port/database") }
        guard let host = components.host, !host.isEmpty else { throw InvalidURL(description: "database URL has no host") }
        let database = String(components.path.drop(while: { $0 == "/" }))
        let mode = components.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "prefer"
        let tls: TLSMode =
            switch mode {
            case "disable", "allow": .disable
            case "require", "verify-ca", "verify-full": .require
            default: .prefer
            }
        self.init(
            host: host, port: components.port ?? 5432,
            username: components.user?.removingPercentEncoding ?? "postgres",
            password: components.password?.removingPercentEncoding,
            database: database.isEmpty ? (components.user ?? "postgres") : database, tls: tls)
    }

    /// The URL form, with the password shown only if asked for.
    public func url(revealPassword: Bool = false) -> String {
        let user = username.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed) ?? username
        let secret =
            password.map { revealPassword ? ":" + ($0.addingPercentEncoding(withAllowedCharacters: .urlPasswordAllowed) ?? $0) : ":***" }
            ?? ""
        return "postgres://\(user)\(secret)@\(host):\(port)/\(database)?sslmode=\(tls.rawValue)"
    }

    public var description: String { url() }

    public func with(database: String) -> DatabaseSettings {
        var copy = self
        copy.database = database
        return copy
    }

    /// The server ends a session that sits idle inside a transaction this long.
    public static let idleInTransactionTimeout = "60s"

    /// `applicationName` names the process's connections in `pg_stat_activity` (what
    /// `DatabasePoolMetrics` counts).
    public func clientConfiguration(maxConnections: Int = 20, applicationName: String? = nil) -> PostgresClient.Configuration {
        let tlsConfig: PostgresClient.Configuration.TLS =
            switch tls {
            case .disable: .disable
            case .prefer: .prefer(.makeClientConfiguration())
            case .require: .require(.makeClientConfiguration())
            }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tlsConfig)
        // Fail fast on a wrong address instead of hanging at start-up.
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.maximumConnections = maxConnections
        // No keep-alive queries: PostgresNIO writes them without a promise, so one sent as its
        // connection closes never ends, and neither does the pool's `run()` (see
        // `withBackground`). `DatabaseWatchdog` probes the pool instead, and an idle connection
        // is closed after a minute anyway.
        configuration.options.keepAliveBehavior = nil
        // A transaction whose client stops talking (a PostgresNIO query that never returns after
        // a PostgreSQL restart, see `withDeadline`) is ended by the server, so the row locks it
        // holds do not outlive it: no ledger transaction waits on its client that long.
        configuration.options.additionalStartupParameters = [
            ("idle_in_transaction_session_timeout", Self.idleInTransactionTimeout)
        ]
        if let applicationName { configuration.options.additionalStartupParameters.append(("application_name", applicationName)) }
        return configuration
    }

    public func makeClient(logger: Logger, maxConnections: Int = 20, applicationName: String? = nil) -> PostgresClient {
        PostgresClient(
            configuration: clientConfiguration(maxConnections: maxConnections, applicationName: applicationName),
            backgroundLogger: logger)
    }
}

extension DatabaseSettings {
    /// Runs `body` with a client whose `run()` is active, and closes the client afterwards.
    public func withClient<T: Sendable>(
        logger: Logger, maxConnections: Int = 20, _ body: @Sendable (PostgresClient) async throws -> T
    ) async throws -> T {
        let client = makeClient(logger: logger, maxConnections: maxConnections)
        return try await withBackground(client.run, logger: logger) { try await body(client) }
    }
}

extension PSQLError {
    /// The database is unreachable for the moment (connection lost or refused, server shutting
    /// down, crashed or still recovering), or takes no writes for the moment (a write reached a
    /// server in recovery: during a failover, the node HAProxy sent it to before its promotion
    /// finished): worth a retry, not a bug. The API answers 503.
    public var meansDatabaseUnavailable: Bool {
        switch code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed:
            return true
        case .server:
            // 08xxx connection exceptions, 57P01 admin / 57P02 crash shutdown, 57P03 cannot connect
            // now, 25006 read-only SQL transaction (a server in recovery).
            let state = serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("08") || ["57P01", "57P02", "57P03", "25006"].contains(state)
        default:
            return false
        }
    }
}

extension PSQLError {
    /// A refusal about the data or the statement itself (a constraint, a type, a raise from a
    /// fold): the same statement would fail again. Connection loss, shutdowns, serialization
    /// failures and deadlocks (class 40), lack of resources (53), operator intervention (57),
    /// system errors (58) and lock timeouts (55P03) are not: they pass, a retry may succeed.
    public var isDataError: Bool {
        guard code == .server, let state = serverInfo?[.sqlState], !meansDatabaseUnavailable else { return false }
        if ["40", "53", "57", "58"].contains(String(state.prefix(2))) || state == "55P03" { return false }
        return true
    }
}
