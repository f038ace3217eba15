import LedgerPostgres
import Testing

@testable import LedgerShards

/// A shard's connection string as the ledger reads it: host, port and database from libpq's two
/// forms, the login its own, anything else refused.
struct ShardConnectionTests {
    static let login = DatabaseSettings(host: "login-host", port: 1, username: "ledger_app", password: "secret", database: "login-db")

    @Test("libpq keyword and URI forms give the shard's host, port, database (else the login's), with our login")
    func read() throws {
        let read: [(String, host: String, port: Int, database: String)] = [
            ("host=10.0.0.7 port=6432 dbname=ledger_shard_0", "10.0.0.7", 6432, "ledger_shard_0"),
            ("dbname = 'a b\\'c'   host=db.internal", "db.internal", 5432, "a b'c"),
            ("host='x\\\\y' dbname=d port = 5433", "x\\y", 5433, "d"),
            ("postgresql://10.0.0.8:6543/shard_1", "10.0.0.8", 6543, "shard_1"),
            ("postgres://db.internal/shard_2", "db.internal", 5432, "shard_2"),
            ("dbname=ledger_shard_3", "login-host", 1, "ledger_shard_3"),
        ]
        for (connection, host, port, database) in read {
            let settings = try ShardConnection.settings(connection, login: Self.login)
            #expect(settings.host == host, "\(connection)")
            #expect(settings.port == port, "\(connection)")
            #expect(settings.database == database, "\(connection)")
            #expect(settings.username == "ledger_app" && settings.password == "secret", "\(connection)")
        }
    }

    @Test("a string setting anything but host, port and dbname, or lacking dbname, is refused with what's wrong")
    func refused() {
        let refused: [(String, says: String)] = [
            ("host=a dbname=b user=postgres", "user is set"),
            ("host=a dbname=b password=x", "password is set"),
            ("host=a dbname=b sslmode=disable", "sslmode is set"),
            ("host=a dbname=b host=c", "host is set twice"),
            ("host=a", "needs dbname"),
            ("host= dbname=b", "a host if it sets one"),
            ("port=5432 dbname=b", "a port needs its host"),
            ("host=a dbname=b port=0", "not a TCP port"),
            ("host=a dbname=b port=65536", "not a TCP port"),
            ("host=a dbname=b port=x", "not a TCP port"),
            ("host=a dbname='b", "unterminated"),
            ("host a dbname=b", "keyword=value"),
            ("postgresql://postgres:pw@a/b", "no user, password or query"),
            ("postgresql://a/b?sslmode=disable", "no user, password or query"),
            ("postgresql://a", "no user, password or query"),
            ("postgresql://a:99999/b", "not a TCP port"),
            ("host=a,b dbname=d", "one name or address, over TCP"),
            ("host=/run/postgresql dbname=d", "one name or address, over TCP"),
            ("host=[::1] dbname=d", "one name or address, over TCP"),
        ]
        for (connection, says) in refused {
            do {
                _ = try ShardConnection.settings(connection, login: Self.login)
                Issue.record("\(connection) was read")
            } catch {
                #expect(error.description.contains(says), "\(connection): \(error)")
            }
        }
    }

    @Test("the keyword form the ledger writes reads back as written, quotes and backslashes included")
    func keywords() throws {
        for (host, port, database) in [("10.0.0.7", 6432, "ledger_shard_0"), ("db", 5432, "it's a \\ db")] {
            let settings = try ShardConnection.settings(
                ShardConnection.keywords(host: host, port: port, database: database), login: Self.login)
            #expect(settings.host == host && settings.port == port && settings.database == database)
        }
        let local = try ShardConnection.settings(ShardConnection.keywords(database: "a b"), login: Self.login)
        #expect(local.host == "login-host" && local.port == 1 && local.database == "a b")
    }
}
