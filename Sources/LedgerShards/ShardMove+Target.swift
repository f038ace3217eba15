import Foundation
import LedgerPostgres
import Logging
import PostgresNIO

/// The new shard T before a move changes anything, and what T must not share with S.
extension ShardMove {
    /// T on its server, with the ledger's own login, before anything changes: the login admitted
    /// (a refusal names the role, the server and the database: `DatabaseFailure`), and the
    /// database either missing on S's server (the move makes it) or a ledger's (a copy of S made
    /// before; whether at S's head is checked after). Each refusal is one sentence.
    static func checkTarget(_ to: DatabaseSettings, target: String, from: DatabaseSettings, logger: Logger) async throws {
        let holdsLedger: Bool?
        do {
            holdsLedger = try await PostgresAdmin.withConnection(to, logger: logger) { connection in
                try await connection.queryUnlessClosed("SELECT to_regclass('ledger_head') IS NOT NULL", logger: logger)
                    .decode(Bool.self).reduce(false) { $0 || $1 }
            }
        } catch let error as PSQLError where DatabaseFailure(error).sqlState == "3D000" {
            holdsLedger = nil
        } catch let error as PSQLError {
            throw DatabaseFailure(error, doing: "reaching the new shard \(target) with the ledger's own login", on: to)
        }
        switch holdsLedger {
        case nil where from.host != to.host || from.port != to.port:
            throw missingElsewhere(from, to)
        case false?:
            throw Refused(
                "\(target) names \(to.database), a database that holds no ledger: name one that does not exist yet on \(from.host):\(from.port) (the move makes it there, a copy of \(from.database)), or a copy of \(from.database) made before (docs/SCALING.md)"
            )
        default:
            return
        }
    }

    /// T missing on another server than S's: the move makes T only beside S.
    static func missingElsewhere(_ from: DatabaseSettings, _ to: DatabaseSettings) -> Refused {
        Refused(
            "\(to.database) does not exist on \(to.host):\(to.port): on another server, make it a copy of \(from.database) first (a base backup promoted: docs/SCALING.md), then move"
        )
    }

    /// A shard's cursor key (`ledger_cursor_key`, PageCursors), which a copy of it has too.
    static func cursorKey(_ shard: DatabaseSettings, logger: Logger) async throws -> ByteBuffer {
        try await PostgresAdmin.withConnection(shard, logger: logger) { connection in
            for try await key in try await connection.queryUnlessClosed("SELECT key FROM ledger_cursor_key", logger: logger)
                .decode(ByteBuffer.self)
            {
                return key
            }
            throw Refused("\(shard.database) has no cursor key: run `ledger migrate` on it, then move")
        }
    }

    /// T's cursor key made its own while it is S's (`sourceKey`, come with the copy), so that a
    /// list's cursor S signed is refused on T (400 `invalid_cursor`) as any other database's; once
    /// T has its own, nothing changes (a move run again, or finished).
    static func ownCursorKey(on connection: PostgresConnection, unlike sourceKey: ByteBuffer, logger: Logger) async throws {
        try await connection.queryUnlessClosed(
            "UPDATE ledger_cursor_key SET key = uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()) WHERE key = \(sourceKey)",
            logger: logger)
    }
}
