import Logging
import PostgresNIO

extension DatabaseSettings {
    /// Logs in once, on a connection of its own, and closes it: a refused login (or any other
    /// refusal by the server) is thrown at once as a `DatabaseFailure` naming the role, the server,
    /// the database and `passwordSource`. A pool would retry it until its circuit breaker trips, a
    /// minute later, and say only that. A server out of reach is left to the pool, which waits
    /// for it as before.
    public func checkLogin(passwordSource: String, logger: Logger) async throws {
        do {
            let connection = try await PostgresConnection.connect(
                configuration: try single(connectTimeout: .seconds(5)), id: 0, logger: logger)
            try? await connection.close()
        } catch let error as PSQLError where error.code == .server && !error.meansDatabaseUnavailable {
            throw DatabaseFailure(error, on: self, passwordSource: passwordSource)
        } catch {
            // Out of reach for now (or starting up): the pool waits for it.
        }
    }

    /// Whether a new connection of its own, outside any pool, answers `SELECT 1`: thrown, why not.
    public func answerOnce(connectTimeout: TimeAmount, logger: Logger) async throws {
        let connection = try await PostgresConnection.connect(
            configuration: try single(connectTimeout: connectTimeout), id: 0, logger: logger)
        do {
            try await connection.query("SELECT 1", logger: logger)
        } catch {
            try? await connection.close()
            throw error
        }
        try? await connection.close()
    }

    /// One connection's configuration, with TLS as the settings say.
    func single(connectTimeout: TimeAmount) throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS =
            switch tls {
            case .disable: .disable
            case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tls)
        configuration.options.connectTimeout = connectTimeout
        return configuration
    }
}
