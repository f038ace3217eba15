import Foundation
import HTTPTypes
import LedgerDomain
import LedgerWire
import Testing

@testable import LedgerShardFront

/// `/ready` on shards (issue 66): ready while one shard is, so one shard's trouble neither takes
/// the instance out of a load balancer nor holds its answer.
struct ShardReadyTests {
    static func ready(_ shards: [FakeShard]) async throws -> ShardCutShortTests.Answer {
        try await ShardCutShortTests.ask(shards, .get, "/ready")
    }

    @Test("/ready: 200 while one shard is ready, another refusing, hung or down; else a shard's refusal")
    func ready() async throws {
        let shards = [FakeShard(holding: [], next: 1), FakeShard(holding: [], next: 1)]
        #expect(try await Self.ready(shards).status == .ok)

        // Shard 1's own check fails before its outage is seen (its connections dropped): still ready.
        shards[1].change { $0.notReady = DomainError(.notReady, "the database is not ready") }
        #expect(try await Self.ready(shards).status == .ok)
        // Shard 1 hangs (going down, not seen yet): shard 0's answer does not wait for it.
        shards[1].change { $0.readyHangs = true }
        let started = ContinuousClock.now
        #expect(try await Self.ready(shards).status == .ok)
        #expect(ContinuousClock.now - started < .seconds(10), "the answer waited for the hung shard")
        shards[1].change { $0.readyHangs = false }

        // Every shard draining: the instance is not ready, with their reason.
        for shard in shards { shard.change { $0.notReady = DomainError(.shuttingDown, "this instance is shutting down") } }
        let draining = try await Self.ready(shards)
        #expect(draining.status == .serviceUnavailable && draining.text.contains("shutting_down"), "\(draining.text)")

        // No shard serves: 503 not_ready.
        for shard in shards { shard.change { $0.up = false } }
        let none = try await Self.ready(shards)
        #expect(none.status == .serviceUnavailable && none.text.contains("not_ready"), "\(none.text)")
    }
}
