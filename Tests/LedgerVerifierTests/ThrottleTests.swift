import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerAPI
import LedgerDeviceSimulator
import LedgerDomain
import LedgerFeed
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import LedgerTokens
import LedgerVerifier
import LedgerWire
import Logging
import PostgresNIO
import Testing

/// The proof-rejection throttle as two API instances of one database see it: each with its
/// own router and its own connection pool, nothing shared but PostgreSQL.
@Suite("Rejection throttle")
struct ThrottleTests {
    static func withTwoInstances(limit: Int, _ body: @Sendable (RouterAPI, RouterAPI) async throws -> Void) async throws {
        try await withTestStore { store, client, settings in
            let authority = try await TokenAuthority(secret: "test-secret-\(UUID())")
            try await withClient(settings) { other in
                func instance(_ client: PostgresClient, _ store: EventStore) -> Application<RouterResponder<LedgerRequestContext>> {
                    let logger = Logger(label: "api-test")
                    let feed = FeedTail(
                        store: store, events: NotificationHub(client: client, channel: EventStore.channel, logger: logger), logger: logger)
                    var settings = ProofEngine.Settings(maxGroup: 64)
                    settings.rejectionLimit = limit
                    return Application(
                        router: buildRouter(
                            client: client, store: store, authority: authority, configuration: .testing(),
                            proofs: .inProcess(client, store, settings: settings), feed: feed, logger: logger))
                }
                let (first, second) = (instance(client, store), instance(other, EventStore(client: other, logger: Logger(label: "b"))))
                try await first.test(.router) { a in
                    try await second.test(.router) { b in
                        try await body(
                            RouterAPI(client: a, authority: authority, db: client),
                            RouterAPI(client: b, authority: authority, db: other))
                    }
                }
            }
        }
    }

    /// Two instances share one count: rejections alternate between them, and the fourth is refused
    /// 429 with Retry-After, recording nothing.
    @Test("two instances share one count: the fourth rejection is a 429 with Retry-After, recording nothing")
    func sharedAcrossInstances() async throws {
        try await Self.withTwoInstances(limit: 3) { a, b in
            let id = try await a.call(.post, "/v1/collaborations", as: "owner", json: startBody).body["collaborationId"]!.string!
            let stranger = SimulatedPerson(collaborationId: id, devices: 1)
            var answers: [(HTTPResponse.Status, String?)] = []
            for round in 0..<6 {
                let api = round.isMultiple(of: 2) ? a : b
                let challenge = try await api.challenge(id, as: "flooder")
                let headers = try await api.execute(
                    uri: "/v1/collaborations/\(id)/proofs", method: .post,
                    headers: [.authorization: "Bearer \(try await api.token("flooder"))", .contentType: "application/json"],
                    body: .init(string: proofBody(stranger, challenge: challenge)))
                answers.append((headers.status, headers.headers[.retryAfter]))
            }
            #expect(answers.map(\.0) == [.forbidden, .forbidden, .forbidden, .tooManyRequests, .tooManyRequests, .tooManyRequests])
            let retryAfter = answers.dropFirst(3).compactMap { $0.1.flatMap(Int.init) }
            #expect(retryAfter.count == 3 && retryAfter.allSatisfy { (1...60).contains($0) }, "\(answers.map(\.1))")
            #expect(try await a.eventCount() == 4, "the start and three rejections")
        }
    }

    @Test("a concurrent burst on both instances records no more rejections than the limit")
    func burst() async throws {
        try await Self.withTwoInstances(limit: 3) { a, b in
            let id = try await a.call(.post, "/v1/collaborations", as: "owner", json: startBody).body["collaborationId"]!.string!
            let stranger = SimulatedPerson(collaborationId: id, devices: 1)
            var challenges: [(RouterAPI, JSONValue)] = []
            for round in 0..<12 {
                let api = round.isMultiple(of: 2) ? a : b
                challenges.append((api, try await api.challenge(id, as: "burster")))
            }
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for (api, challenge) in challenges {
                    group.addTask {
                        try await api.call(
                            .post, "/v1/collaborations/\(id)/proofs", as: "burster", json: proofBody(stranger, challenge: challenge)
                        ).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // At most three pass the throttle: rejected and recorded (403); the rest are refused (429).
            let passed = statuses.filter { $0 == .forbidden }.count
            #expect((1...3).contains(passed) && statuses.filter { $0 == .tooManyRequests }.count == 12 - passed, "\(statuses)")
            #expect(try await a.eventCount() <= 4, "at most three rejections recorded")
        }
    }
}
