import Hummingbird
import LedgerAPI
import LedgerDomain
import LedgerWire

/// The query parameters by which a client written for shards names an event's shard and level
/// (`?shard=k`, `?level=shard|top`, docs/SCALING.md). The front of several shards reads them
/// itself (`ShardRouter`) and asks the shard without them; one database, its only shard 0 with
/// no top log, takes them here (`buildRouter`'s `evidenceQuery`).
public enum ShardQuery {
    /// One database's reading: shard 0 and the shard level are its own; any other is refused.
    @Sendable public static func oneDatabase(_ request: Request) throws {
        if let shard = try Query.integer(request, "shard", minimum: 0), shard != 0 {
            throw DomainError.invalid("shard must be 0: this ledger is one database, its only shard", code: .invalidQuery)
        }
        if let level = request.uri.queryParameters["level"], level != "shard" {
            throw DomainError.invalid("level must be shard: this ledger is one database, with no top log", code: .invalidQuery)
        }
    }
}
