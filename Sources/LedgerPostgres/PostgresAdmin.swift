import Foundation
import Logging
import PostgresNIO

/// Cluster-level chores done over a short-lived connection to a maintenance database.
public enum PostgresAdmin {
    public static func createDatabaseIfMissing(
        _ name: String, template: String? = nil, on settings: DatabaseSettings, logger: Logger
    ) async throws {
        try await withConnection(settings, logger: logger) { connection in
            let rows = try await connection.queryUnlessClosed("SELECT 1 FROM pg_database WHERE datname = \(name)", logger: logger)
            var exists = false
            for try await _ in rows { exists = true }
            if !exists {
                let templateClause = template.map { " TEMPLATE \(quoteIdentifier($0))" } ?? ""
                try await connection.queryUnlessClosed(
                    PostgresQuery(unsafeSQL: "CREATE DATABASE \(quoteIdentifier(name))\(templateClause)"), logger: logger)
            }
        }
    }

    public static func dropDatabase(_ name: String, on settings: DatabaseSettings, logger: Logger) async throws {
        try await withConnection(settings, logger: logger) { connection in
            try await connection.queryUnlessClosed(
                PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(quoteIdentifier(name)) WITH (FORCE)"), logger: logger)
        }
    }

    /// The services' login role: `name` with `password` (letters and digits only: DDL takes no
    /// bound parameters), a member of `ledger_service` (made by the migrations: run them first).
    /// Returns how to connect as it. For clusters this process owns (the embedded one, tests);
    /// elsewhere an administrator creates the role.
    public static func serviceLogin(
        _ name: String, password: String = UUID().uuidString.replacingOccurrences(of: "-", with: ""),
        on settings: DatabaseSettings, logger: Logger
    ) async throws -> DatabaseSettings {
        guard password.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw InvalidPassword()
        }
        try await withConnection(settings, logger: logger) { connection in
            let rows = try await connection.queryUnlessClosed("SELECT 1 FROM pg_roles WHERE rolname = \(name)", logger: logger)
            var exists = false
            for try await _ in rows { exists = true }
            let role = quoteIdentifier(name)
            let verb = exists ? "ALTER ROLE \(role) WITH" : "CREATE ROLE \(role)"
            try await connection.queryUnlessClosed(
                PostgresQuery(unsafeSQL: "\(verb) LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '\(password)'"), logger: logger)
            try await connection.queryUnlessClosed(PostgresQuery(unsafeSQL: "GRANT ledger_service TO \(role)"), logger: logger)
        }
        var service = settings
        service.username = name
        service.password = password
        return service
    }

    /// `CREATE EXTENSION IF NOT EXISTS name` in the database `client` reaches. Where the server
    /// has no such extension, a `DatabaseFailure` that knows the server's major version, so that
    /// it names the package to install.
    public static func createExtension(_ name: String, client: PostgresClient, logger: Logger) async throws {
        do {
            try await client.queryUnlessClosed(
                PostgresQuery(unsafeSQL: "CREATE EXTENSION IF NOT EXISTS \(quoteIdentifier(name))"), logger: logger
            ) { _ in }
        } catch let error as PSQLError where DatabaseFailure(error).missingExtension != nil {
            let major = try? await client.queryUnlessClosed(
                "SELECT current_setting('server_version_num')::int / 10000", logger: logger
            ) { try await $0.decode(Int.self).first { _ in true } }
            throw DatabaseFailure(error, serverMajor: major ?? nil)
        }
    }

    /// One connection for the closure's lifetime (no pool: for start-up and admin work).
    public static func withConnection<T: Sendable>(
        _ settings: DatabaseSettings, logger: Logger, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        let config = PostgresConnection.Configuration(
            host: settings.host, port: settings.port, username: settings.username, password: settings.password,
            database: settings.database, tls: .disable)
        let connection = try await PostgresConnection.connect(configuration: config, id: 1, logger: logger)
        do {
            let result = try await body(connection)
            try await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }

    public struct InvalidPassword: Error, CustomStringConvertible {
        public var description: String { "a service password here is letters and digits only" }
    }

    public static func quoteIdentifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
