import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerAPI
import LedgerDomain
import LedgerWire
import NIOCore
import Testing

@testable import LedgerShardFront

/// A write of every shard cut short (docs/SCALING.md, "What a fan-out cut short answers"), on
/// shards held in memory (`FakeShard`): the answer names what each shard did, and a retry
/// finishes it.
struct ShardCutShortTests {
    struct Answer {
        var status: HTTPResponse.Status
        var headers: HTTPFields
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
        func cutShort() throws -> CutShort { try APIJSON.decoder().decode(CutShort.self, from: body) }
    }

    static func ask(
        _ shards: [FakeShard], _ method: HTTPRequest.Method, _ uri: String, body: String? = nil
    ) async throws -> Answer {
        let app = Application(responder: try FakeShard.front(shards))
        return try await app.test(.router) { client in
            let response = try await client.execute(
                uri: uri, method: method, headers: [.contentType: "application/json"], body: body.map { ByteBuffer(string: $0) })
            return Answer(status: response.status, headers: response.headers, body: Data(response.body.readableBytesView))
        }
    }

    static let erase = #"{"account":"erin","reason":"TICKET-66"}"#

    @Test("an erasure cut short: the shards that answer erase, each one's part named; a retry names all")
    func erasure() async throws {
        let shards = [FakeShard(holding: ["erin", "frank"], next: 10), FakeShard(holding: ["erin", "frank"], next: 20)]
        shards[1].change { $0.up = false }
        let cut = try await Self.ask(shards, .post, "/v1/privacy/erasures", body: Self.erase)
        #expect(cut.status == .serviceUnavailable && cut.headers[.retryAfter] == "1", "\(cut.text)")
        let answer = try cut.cutShort()
        #expect(answer.error.code == "cut_short")
        #expect(answer.shards.map(\.shard) == [0, 1] && answer.shards.map(\.completed) == [true, false])
        #expect(answer.shards[0].erasure?.position == 10 && answer.shards[0].erasure?.erasedAt == FakeShard.erasedAt)
        #expect(answer.shards[1].erasure == nil && answer.shards[1].error?.code == "database_unavailable")
        // The shard's erasure beside its shard and `completed`, as each shard's part of the whole answer.
        #expect(cut.text.contains(#"{"completed":true,"erasedAt":"2027-01-15T08:00:00.000Z","position":10,"shard":0,"#), "\(cut.text)")

        // Back: the retry finishes it; shard 0 has nothing left to erase (it cannot say more).
        shards[1].change { $0.up = true }
        let retry = try await Self.ask(shards, .post, "/v1/privacy/erasures", body: Self.erase)
        #expect(retry.status == .ok, "\(retry.text)")
        let whole = try APIJSON.decoder().decode(Erasure.self, from: retry.body)
        #expect(whole.held && whole.shards?.map(\.shard) == [0, 1])
        #expect(whole.shards?[0].held == false && whole.shards?[1].position == 20)

        // A shard refusing midway (its database lost): the others' erasures stand, its error named.
        shards[1].change { $0.refusing = DomainError(.notAnswered, "the request was not answered in time; retry") }
        let midway = try await Self.ask(shards, .post, "/v1/privacy/erasures", body: #"{"account":"frank","reason":"T-2"}"#)
        #expect(midway.status == .serviceUnavailable)
        let parts = try midway.cutShort().shards
        #expect(parts[0].completed && parts[0].erasure?.position == 11 && parts[1].error?.code == "not_answered")
        #expect(!shards[0].holds("frank"))

        // A refusal of the request itself, before any shard erased: the answer as one database gives it.
        shards[0].change { $0.refusing = DomainError(.notPrivacyOfficer, "only a caller with the role privacy may erase") }
        let refused = try await Self.ask(shards, .post, "/v1/privacy/erasures", body: Self.erase)
        #expect(refused.status == .forbidden && !refused.text.contains("shards"), "\(refused.text)")
    }

    @Test("a webhook of every collaboration cut short: none asked while a shard is down, undone midway")
    func registration() async throws {
        let shards = [FakeShard(holding: [], next: 1), FakeShard(holding: [], next: 1)]
        shards[1].change { $0.up = false }
        let down = try await Self.ask(shards, .post, "/v1/webhooks", body: #"{"url":"https://example.com/hook"}"#)
        #expect(down.status == .serviceUnavailable && down.headers[.retryAfter] == "1", "\(down.text)")
        let notAsked = try down.cutShort().shards
        #expect(notAsked.map(\.completed) == [false, false])
        #expect(notAsked.map(\.error?.code) == ["cut_short", "database_unavailable"])
        #expect(shards[0].webhooks.isEmpty, "shard 0 was not asked")

        // Shard 1 registers it and loses its answer: both delete it again.
        shards[1].change {
            $0.up = true
            $0.failingAfter = DomainError(.databaseUnavailable, "the database is unavailable for the moment; retry", retryAfter: 1)
        }
        let lost = try await Self.ask(shards, .post, "/v1/webhooks", body: #"{"url":"https://example.com/hook"}"#)
        #expect(lost.status == .serviceUnavailable, "\(lost.text)")
        let undone = try lost.cutShort().shards
        #expect(undone[0].completed && undone[0].webhook != nil && undone[0].undone == true)
        #expect(!undone[1].completed && undone[1].undone == true && undone[1].error?.code == "database_unavailable")
        #expect(shards.allSatisfy { $0.webhooks.isEmpty })

        // Shard 1 full: its refusal, with what each shard did.
        shards[1].change {
            $0.failingAfter = nil
            $0.full = true
        }
        let full = try await Self.ask(shards, .post, "/v1/webhooks", body: #"{"url":"https://example.com/hook"}"#)
        #expect(full.status == .conflict && full.headers[.retryAfter] == nil, "\(full.text)")
        let refused = try full.cutShort()
        #expect(refused.error.code == "too_many_webhooks" && refused.shards.map(\.undone) == [true, nil])
        #expect(shards.allSatisfy { $0.webhooks.isEmpty })

        shards[1].change { $0.full = false }
        let registered = try await Self.ask(shards, .post, "/v1/webhooks", body: #"{"url":"https://example.com/hook"}"#)
        #expect(registered.status == .created)
        #expect(shards.allSatisfy { $0.webhooks.count == 1 })
    }

    @Test("a webhook's deletion and an export cut short say what each shard did; retried, they finish")
    func deletionAndExport() async throws {
        let shards = [FakeShard(holding: ["erin"], next: 1), FakeShard(holding: ["erin"], next: 1)]
        for shard in shards { shard.change { $0.webhooks = ["w1"] } }
        shards[1].change { $0.up = false }
        let cut = try await Self.ask(shards, .delete, "/v1/webhooks/w1")
        #expect(cut.status == .serviceUnavailable && cut.headers[.retryAfter] == "1", "\(cut.text)")
        let parts = try cut.cutShort().shards
        #expect(parts[0].completed && parts[0].deleted == true && !parts[1].completed)

        let export = try await Self.ask(shards, .get, "/v1/privacy/export?account=erin")
        #expect(export.status == .serviceUnavailable, "\(export.text)")
        #expect(try export.cutShort().shards.map(\.completed) == [true, false])
        #expect(!export.text.contains("psn-"), "no shard's part of an incomplete export")

        shards[1].change { $0.up = true }
        #expect(try await Self.ask(shards, .delete, "/v1/webhooks/w1").status == .noContent, "shard 1 still held it")
        #expect(try await Self.ask(shards, .delete, "/v1/webhooks/w1").status == .notFound)
        let whole = try await Self.ask(shards, .get, "/v1/privacy/export?account=erin")
        #expect(whole.status == .ok && whole.text.contains("psn-erin"))
    }
}
