import Logging
import PostgresNIO

extension DatabaseSettings {
    /// Logs in once, on a connection of its own, and closes it: a refused login (or any other
    /// refusal by the server) is thrown at once as a `DatabaseFailure` naming the role, the server,
    /// the database and `passwordSource`. A pool would retry it until its circuit breaker trips, a
    /// minute later, and say only that. A server out of reach is left to the pool, which waits
    /// for it as before.
    public func checkLogin(passwordSource: String, logger: Logger) async throws {
        let tls: PostgresConnection.Configuration.TLS =
            switch tls {
            case .disable: .disable
            case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tls)
        configuration.options.connectTimeout = .seconds(5)
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            try? await connection.close()
        } catch let error as PSQLError where error.code == .server && !error.meansDatabaseUnavailable {
            throw DatabaseFailure(error, on: self, passwordSource: passwordSource)
        } catch {
            // Out of reach for now (or starting up): the pool waits for it.
        }
    }
}
