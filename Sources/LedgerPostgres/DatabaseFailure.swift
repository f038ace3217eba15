import Foundation
import Logging
import PostgresNIO

/// A database error as an operator reads it, in a sentence or two: what the ledger was doing,
/// where (the role, the server and the database; never the password), the SQLSTATE and the
/// server's message, and for the failures an operator fixes (a refused login, a missing extension,
/// a database that does not exist) what to do. PostgresNIO's own description of a `PSQLError`
/// says none of it, lest it reach a client: this is for operators (the command line, start-up,
/// log lines), never for an HTTP answer.
public struct DatabaseFailure: Error, CustomStringConvertible {
    public var error: PSQLError
    /// What the ledger was doing, a phrase: "applying the migrations".
    public var doing: String?
    /// The login it used: role, server, database.
    public var place: DatabaseSettings?
    /// Where that login's password comes from: "the password file /data/pg-password".
    public var passwordSource: String?
    /// The server's major version: a missing extension's package is named after it.
    public var serverMajor: Int?

    public init(
        _ error: PSQLError, doing: String? = nil, on place: DatabaseSettings? = nil, passwordSource: String? = nil,
        serverMajor: Int? = nil
    ) {
        (self.error, self.doing, self.place, self.passwordSource, self.serverMajor) = (error, doing, place, passwordSource, serverMajor)
    }

    public var sqlState: String? { error.code == .server ? error.serverInfo?[.sqlState] : nil }

    public var description: String { (doing.map { "\($0): " } ?? "") + what }

    /// The failure, without what was being done.
    var what: String {
        let server = place.map { "PostgreSQL at \($0.host):\($0.port)" } ?? "PostgreSQL"
        guard let state = sqlState else {
            let underlying = error.underlying.map { ", \($0)" } ?? ""
            return "no answer from \(server) (\(error.code)\(underlying))"
        }
        let said = "(SQLSTATE \(state): \(error.serverInfo?[.message] ?? "no message"))"
        if state.hasPrefix("28") {
            let login = place.map { "the login of role \"\($0.username)\" to database \"\($0.database)\"" } ?? "the login"
            return "\(server) refused \(login) \(said). Check \(passwordSource ?? "the role's password") "
                + "and that the server's pg_hba.conf admits this role from this host."
        }
        if state == "3D000" {
            let database = place.map { "database \"\($0.database)\"" } ?? "the database named"
            return "\(server) has no \(database) \(said). Create it, or name one that exists."
        }
        if let name = missingExtension {
            let version = serverMajor.map { "PostgreSQL \($0)" } ?? "PostgreSQL"
            let at = place.map { " at \($0.host):\($0.port)" } ?? ""
            return "\(version)\(at) has no extension \(name) \(said). Install \(Self.package(of: name, major: serverMajor)) "
                + "where that server runs, then run this again."
        }
        let detail = error.serverInfo?[.detail].map { " (\(Self.clause($0)))" } ?? ""
        let hint = error.serverInfo?[.hint].map { " \($0)" } ?? ""
        return "\(server) answered SQLSTATE \(state): \(error.serverInfo?[.message] ?? "no message")\(detail).\(hint)"
    }

    /// The extension a `CREATE EXTENSION` found missing: `extension "x" is not available`
    /// (0A000, PostgreSQL 15 on), or `could not open extension control file ".../x.control"`
    /// (58P01, before).
    public var missingExtension: String? {
        guard let state = sqlState, ["0A000", "58P01"].contains(state), let message = error.serverInfo?[.message] else { return nil }
        let quoted = message.split(separator: "\"", omittingEmptySubsequences: false)
        guard quoted.count >= 3 else { return nil }
        if message.hasPrefix("extension \""), message.hasSuffix("is not available") { return String(quoted[1]) }
        if message.hasPrefix("could not open extension control file"), quoted[1].hasSuffix(".control") {
            return String(URL(fileURLWithPath: String(quoted[1])).deletingPathExtension().lastPathComponent)
        }
        return nil
    }

    /// What to install for the extension `name`: Debian's package (PGDG's too) where the ledger knows its name.
    static func package(of name: String, major: Int?) -> String {
        guard name == "plproxy" else { return "the package of the extension \(name)" }
        let package = "postgresql-\(major.map(String.init) ?? "<major version>")-plproxy"
        return "the package \(package) (apt-get install \(package))"
    }

    /// A server's sentence as a clause: without its final period.
    static func clause(_ sentence: String) -> String {
        sentence.hasSuffix(".") ? String(sentence.dropLast()) : sentence
    }
}

extension DatabaseFailure {
    /// `error` for a log line: a database error as the server's SQLSTATE and message, any other
    /// as it describes itself (`reflecting`: its debug description).
    public static func describe(_ error: any Error, reflecting: Bool = false) -> String {
        if let failure = error as? DatabaseFailure { return failure.description }
        if let error = error as? PSQLError { return DatabaseFailure(error).description }
        return reflecting ? String(reflecting: error) : String(describing: error)
    }

    /// Runs `body`; a database error it throws comes out as a `DatabaseFailure` saying what was
    /// being done and where. One explained already keeps what it says and gains what it lacked.
    public static func explaining<T>(
        _ doing: String?, on place: DatabaseSettings? = nil, passwordSource: String? = nil,
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
    ) async throws -> T {
        do {
            return try await body()
        } catch let error as PSQLError {
            throw DatabaseFailure(error, doing: doing, on: place, passwordSource: passwordSource)
        } catch var failure as DatabaseFailure {
            failure.doing = failure.doing ?? doing
            failure.place = failure.place ?? place
            failure.passwordSource = failure.passwordSource ?? passwordSource
            throw failure
        }
    }
}
