import Foundation
import HTTPTypes
import LedgerAPI
import LedgerShards

/// Where the shard router sends each request, from its method, path and the few values that
/// choose a shard (pure: `ShardRouterTests`).
extension ShardRouter {
    /// Where a request goes.
    enum Destination: Equatable {
        case shard(Int)
        /// What needs no database (health, metrics, the OpenAPI document, the console, unknown
        /// paths): the first shard's router, whether its database answers or not.
        case noDatabase
        case anyShard
        case everyShard
        /// The shard of the body's `collaborationId` (a challenge).
        case bodyCollaboration
        /// Every shard's answer, merged (`ShardFanOut`).
        case myCollaborations
        /// The collaborations list, shard after shard (`ShardFanOut.collaborations`).
        case collaborationsList
        /// The top log's status with every shard's (`ShardFanOut.logStatus`).
        case logStatus
        /// A webhook's registration: its collaboration's shard, or every shard without one
        /// (`ShardFanOut.registerWebhook`).
        case webhookRegistration
        /// Every shard's webhooks (`ShardFanOut.webhooks`).
        case webhookList
        /// A webhook deleted on every shard (`ShardFanOut.deleteWebhook`).
        case webhookDeletion
        /// Every shard's change feed, merged (`ShardFeed`).
        case feed
        /// An erasure on every shard (`ShardFanOut.erasure`).
        case erasure
        /// An account's personal data from every shard (`ShardFanOut.export`).
        case export
        /// An event's evidence through both levels (`ShardFanOut.evidence`): `?shard=k` names
        /// its shard (nil: not named, or not a shard's index).
        case evidence(shard: Int?)
        /// The access audit of every shard, or of the one that holds the filter's collaboration
        /// (`ShardFanOut.auditAccess`).
        case accessAudit(only: Int?)
        /// A collaboration's lookup, on its shard through both levels (`ShardFanOut.lookup`); nil:
        /// no collaboration named (an identity's lookup, every shard's: `identityLookup`).
        case lookup(shard: Int?)
        /// Shard k's own log: `/tlog/shard/{k}/rest` is its router's `/tlog/rest` (the path, without the query).
        case shardLog(Int, path: String)
        /// The top log (`topLog`): its tiles under `/tlog/`, its key, checkpoints and proofs under `/v1/log/`.
        case topLog
        case notAcrossShards
    }

    func destination(
        method: HTTPRequest.Method, path: String, idempotencyKey: String?, collaboration: String? = nil, named: String? = nil
    ) -> Destination {
        let segments = path.split(separator: "/")[...]
        guard let first = segments.first else { return .noDatabase }
        switch first {
        case "ready":
            return .everyShard
        case "tlog":
            // `/tlog/shard/{k}/…`, k a shard's index written as Swift writes it (no sign, no
            // leading zero), so one shard has one path; the rest of `/tlog/…` is the top log's.
            let rest = Array(segments.dropFirst())
            guard rest.count >= 3, rest[0] == "shard", let index = Int(rest[1]), String(index) == rest[1], shards.indices.contains(index)
            else { return rest.first == "shard" ? .noDatabase : .topLog }
            return .shardLog(index, path: "/tlog/" + rest[2...].joined(separator: "/"))
        case "v1":
            let rest = Array(segments.dropFirst())
            switch rest.first {
            case "collaborations" where rest.count >= 2:
                return .shard(shard(of: String(rest[1])))
            case "collaborations" where method == .post:
                return idempotencyKey.map { .shard(shard(of: $0)) } ?? .anyShard
            case "collaborations" where method == .get:
                return .collaborationsList
            case "collaborations":
                return .notAcrossShards
            case "challenges" where method == .post:
                return .bodyCollaboration
            case "accounts" where method == .get && rest == ["accounts", "me", "collaborations"]:
                return .myCollaborations
            case "audit" where method == .get && rest.count == 3 && rest[1] == "evidence":
                // `named`: the query's `shard`, a shard's index written as Swift writes it.
                return .evidence(shard: named.flatMap(Int.init).flatMap { String($0) == named && shards.indices.contains($0) ? $0 : nil })
            case "privacy" where method == .post && rest == ["privacy", "erasures"]:
                return .erasure
            case "privacy" where method == .get && rest == ["privacy", "export"]:
                return .export
            case "feed" where method == .get && rest == ["feed"]:
                return .feed
            case "audit" where method == .get && rest == ["audit", "access"]:
                // One collaboration's audit is its shard's alone.
                return .accessAudit(only: collaboration.map { shard(of: $0) })
            case "audit" where method == .get && rest == ["audit", "lookup"]:
                // A collaboration's events are its shard's alone, and so is their index.
                return .lookup(shard: collaboration.map { shard(of: $0) })
            case "log" where method == .get && rest == ["log", "status"]:
                return .logStatus
            case "log":
                return .topLog
            case "webhooks" where method == .post && rest == ["webhooks"]:
                return .webhookRegistration
            case "webhooks" where method == .get && rest == ["webhooks"]:
                return .webhookList
            case "webhooks" where method == .delete && rest.count == 2:
                return .webhookDeletion
            case "webhooks":
                // No route of any shard's router: its 404 or 405, which needs no database.
                return .noDatabase
            case "accounts", "audit", "feed", "privacy":
                return .notAcrossShards
            default:
                return .noDatabase
            }
        default:
            return .noDatabase
        }
    }
}
