import Foundation
import LedgerPostgres

/// Where a shard is, from the connection string its partitions name in the PL/Proxy cluster:
/// libpq's `key=value` form (`host=10.0.0.7 port=5432 dbname=ledger`) or its URI form
/// (`postgresql://10.0.0.7:5432/ledger`). The ledger connects there with its own login (the
/// services' credentials), as PL/Proxy connects with its user mapping's. A string without host
/// (and port) names a database on the login's own server: how the embedded cluster, whose port
/// changes at each start, names its shards.
///
/// Fails closed: only `host`, `port` and `dbname` are read, and a string that sets anything else
/// (`user`, `sslmode`, `options`…) is refused, so the ledger never connects other than as the
/// definition says. A URI's user, password and query are refused alike.
public enum ShardConnection {
    public typealias Unusable = ShardCluster.Unusable

    /// `login` with the shard's host, port and database.
    public static func settings(_ connection: String, login: DatabaseSettings) throws(Unusable) -> DatabaseSettings {
        var settings = login
        let fields = try fields(of: connection)
        guard let database = fields["dbname"], !database.isEmpty, fields["host"] != "" else {
            throw Unusable(description: "\(connection): a shard's connection string needs dbname, and a host if it sets one")
        }
        settings.database = database
        guard let host = fields["host"] else {
            guard fields["port"] == nil else { throw Unusable(description: "\(connection): a port needs its host") }
            return settings
        }
        // One host, over TCP: libpq's lists (`a,b`), socket folders (`/run/…`) and bracketed
        // addresses are not what the ledger's pools connect to.
        guard !host.contains(","), !host.hasPrefix("/"), !host.hasPrefix("["), !host.contains(where: \.isWhitespace) else {
            throw Unusable(description: "\(connection): the host must be one name or address, over TCP")
        }
        settings.host = host
        settings.port = 5432
        if let port = fields["port"] {
            guard let number = Int(port), (1...65535).contains(number) else {
                throw Unusable(description: "\(connection): port \(port) is not a TCP port")
            }
            settings.port = number
        }
        return settings
    }

    /// PostgreSQL's own databases: a shard's log is never kept in one.
    static let serverOwn: Set<String> = ["postgres", "template0", "template1"]

    /// Refuses `connection` (read as `settings`) as a shard when it names PostgreSQL's own
    /// databases, or the database of `owner`, the ledger's own (the top log's and the PL/Proxy
    /// cluster's definition's): each said in a sentence, with what to name instead.
    public static func refuseReserved(_ connection: String, _ settings: DatabaseSettings, owner: DatabaseSettings) throws(Unusable) {
        if serverOwn.contains(settings.database) {
            throw Unusable(
                description:
                    "\(connection) names \(settings.database), one of PostgreSQL's own databases (postgres, template0, template1), which is never a shard: name a database for the shard alone"
            )
        }
        if place(settings) == place(owner) {
            throw Unusable(
                description:
                    "\(connection) names \(settings.database), the ledger's own database (it keeps the top log and the PL/Proxy cluster's definition), which is never a shard: name another database"
            )
        }
    }

    /// Where a shard's database is, to tell databases apart however their strings spell them (a
    /// host compared as written, lowercased: `localhost` and `127.0.0.1` are two spellings it does
    /// not see through).
    public static func place(_ settings: DatabaseSettings) -> String {
        "\(settings.host.lowercased()):\(settings.port)/\(settings.database)"
    }

    /// libpq's keyword form of `host`, `port` and `dbname`, each value quoted (what `settings`
    /// reads back); without a host, the database alone, on the reader's own server.
    public static func keywords(host: String? = nil, port: Int? = nil, database: String) -> String {
        func quoted(_ value: String) -> String {
            "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        }
        var fields: [String] = []
        if let host { fields.append("host=\(quoted(host))") }
        if let port { fields.append("port=\(port)") }
        return (fields + ["dbname=\(quoted(database))"]).joined(separator: " ")
    }

    static let readable: Set<String> = ["host", "port", "dbname"]

    /// The keywords and values of a connection string, refusing what the ledger does not read.
    static func fields(of connection: String) throws(Unusable) -> [String: String] {
        let pairs: [(String, String)]
        if connection.hasPrefix("postgresql://") || connection.hasPrefix("postgres://") {
            pairs = try uriFields(connection)
        } else {
            pairs = try keywordFields(connection)
        }
        var fields: [String: String] = [:]
        for (key, value) in pairs {
            guard readable.contains(key) else {
                throw Unusable(
                    description:
                        "\(connection): the ledger reads only host, port and dbname of a shard (\(key) is set); its login is the ledger's own"
                )
            }
            guard fields.updateValue(value, forKey: key) == nil else { throw Unusable(description: "\(connection): \(key) is set twice") }
        }
        return fields
    }

    /// `postgresql://host:port/dbname`, nothing else.
    static func uriFields(_ connection: String) throws(Unusable) -> [(String, String)] {
        let rest = connection.drop { $0 != "/" }.dropFirst(2)
        guard !rest.contains("@"), !rest.contains("?"), !rest.contains("%"), let slash = rest.firstIndex(of: "/") else {
            throw Unusable(description: "\(connection): a shard's URI is postgresql://host[:port]/dbname, with no user, password or query")
        }
        let authority = rest[..<slash]
        let database = String(rest[rest.index(after: slash)...])
        var pairs = [("dbname", database)]
        if let colon = authority.lastIndex(of: ":") {
            pairs += [("host", String(authority[..<colon])), ("port", String(authority[authority.index(after: colon)...]))]
        } else {
            pairs.append(("host", String(authority)))
        }
        return pairs
    }

    /// libpq's `keyword = value` pairs: values bare or in single quotes, `\` escaping the next
    /// character in either.
    static func keywordFields(_ connection: String) throws(Unusable) -> [(String, String)] {
        var pairs: [(String, String)] = []
        var characters = Substring(connection)
        func skipSpaces() { characters = characters.drop { $0.isWhitespace } }
        while true {
            skipSpaces()
            guard !characters.isEmpty else { return pairs }
            let key = String(characters.prefix { $0 != "=" && !$0.isWhitespace })
            characters = characters.dropFirst(key.count)
            skipSpaces()
            guard !key.isEmpty, characters.first == "=" else {
                throw Unusable(description: "\(connection): expected keyword=value")
            }
            characters = characters.dropFirst()
            skipSpaces()
            var value = ""
            let quoted = characters.first == "'"
            if quoted { characters = characters.dropFirst() }
            while let next = characters.first, quoted ? next != "'" : !next.isWhitespace {
                characters = characters.dropFirst()
                if next == "\\" {
                    guard let escaped = characters.first else { break }
                    value.append(escaped)
                    characters = characters.dropFirst()
                } else {
                    value.append(next)
                }
            }
            if quoted {
                guard characters.first == "'" else { throw Unusable(description: "\(connection): unterminated quoted value") }
                characters = characters.dropFirst()
            }
            pairs.append((key, value))
        }
    }
}
