import Foundation
import HTTPTypes
import Hummingbird
import LedgerAPI
import LedgerDomain
import LedgerWebhooks
import LedgerWire
import Synchronization

@testable import LedgerShardFront
@testable import LedgerShards

/// A shard's router with the routes a write of every shard asks (an erasure, an export, a
/// webhook's registration and deletion), over what it holds in memory. It can be down (its
/// database does not answer), refuse before doing its part, or fail after doing it (a commit
/// whose answer is lost).
final class FakeShard: Sendable {
    struct State {
        /// The accounts it holds values of.
        var accounts: Set<String>
        var webhooks: Set<String> = []
        /// The next position it appends at.
        var next: Int64
        var up = true
        var full = false
        /// Thrown instead of doing its part.
        var refusing: DomainError?
        /// Thrown once its part is done.
        var failingAfter: DomainError?
        /// What its `/ready` throws (nil: ready), and whether it hangs first (a shard going down).
        var notReady: DomainError?
        var readyHangs = false
    }

    let state: Mutex<State>
    static let erasedAt = Date(timeIntervalSince1970: 1_800_000_000)

    init(holding accounts: Set<String>, next: Int64) {
        state = Mutex(State(accounts: accounts, next: next))
    }

    func change(_ body: (inout State) -> Void) { state.withLock { body(&$0) } }

    var webhooks: Set<String> { state.withLock(\.webhooks) }

    func holds(_ account: String) -> Bool { state.withLock { $0.accounts.contains(account) } }

    var available: @Sendable () -> Bool { { [self] in state.withLock(\.up) } }

    func router() -> RouterResponder<LedgerRequestContext> {
        let router = Router(context: LedgerRequestContext.self)
        router.get("ready") { _, _ -> HealthResponse in
            if self.state.withLock(\.readyHangs) { try await Task.sleep(for: .seconds(60)) }
            if let refusal = self.state.withLock(\.notReady) { throw refusal }
            return HealthResponse(status: "ok")
        }
        router.post("v1/privacy/erasures") { request, context -> Erasure in
            let asked = try await request.decode(as: ErasureRequest.self, context: context)
            return try self.state.withLock { state in
                if let refusing = state.refusing { throw refusing }
                guard state.accounts.remove(asked.account) != nil else { return Erasure.notHeld() }
                state.next += 1
                return Erasure(
                    erasedAt: Self.erasedAt, position: state.next - 1, values: [.init(kind: "title", count: 1)], unerasedPositions: [])
            }
        }
        router.get("v1/privacy/export") { request, _ -> PersonalDataExport in
            let account = request.uri.queryParameters["account"].map(String.init) ?? ""
            return try self.state.withLock { state in
                if let refusing = state.refusing { throw refusing }
                guard state.accounts.contains(account) else { throw DomainError(.notFound, "no personal data is held for this account") }
                return PersonalDataExport(account: account, pseudonym: "psn-\(account)", values: [], positions: [1])
            }
        }
        router.post("v1/webhooks") { _, context -> EditedResponse<Webhook> in
            let id = context.webhookSeed!.id.uuidString.lowercased()
            try self.state.withLock { state in
                if let refusing = state.refusing { throw refusing }
                if state.full { throw DomainError(.tooManyWebhooks, "the account holds the most webhooks it may") }
                state.webhooks.insert(id)
                if let failing = state.failingAfter { throw failing }
            }
            let webhook = Webhook(
                id: id, url: "https://example.com/hook", collaborationId: nil, createdAt: Self.erasedAt, deliveredThrough: 0,
                status: "active", secret: "secret")
            return EditedResponse(status: .created, response: webhook)
        }
        router.delete("v1/webhooks/:id") { _, context -> Response in
            let id = try context.parameters.require("id")
            return try self.state.withLock { state in
                if let refusing = state.refusing { throw refusing }
                guard state.webhooks.remove(id) != nil else { throw DomainError.notFound("webhook") }
                return Response(status: .noContent)
            }
        }
        return router.buildResponder()
    }

    /// The shard front over `shards` (one partition each).
    static func front(_ shards: [FakeShard]) throws -> ShardRouter<RouterResponder<LedgerRequestContext>> {
        ShardRouter(
            map: try ShardMap(partitions: shards.indices.map { "shard\($0)" }), shards: shards.map { $0.router() },
            topLog: Router(context: LedgerRequestContext.self).buildResponder(), available: shards.map(\.available), topAvailable: { true },
            topEvidence: { _, _ in throw CancellationError() }, topEntry: { _, _ in throw CancellationError() }, bodyLimit: 1 << 16)
    }
}
