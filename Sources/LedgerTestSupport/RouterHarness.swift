import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerAPI
import LedgerConfiguration
import LedgerDeviceSimulator
import LedgerDomain
import LedgerFeed
import LedgerLog
import LedgerPostgres
import LedgerProjections
import LedgerStore
import LedgerTokens
import LedgerVerifier
import LedgerWire
import Logging
import NIOCore
import PostgresNIO
import TransparencyLog

/// A router on a fresh migrated database, and tokens to call it with.
public struct API: Sendable {
    public let client: any TestClientProtocol
    public let authority: TokenAuthority
    public let db: PostgresClient
    /// What the router registered, as `method /path/{param}` (the OpenAPI test compares the
    /// document with it).
    public let routes: Set<String>

    public init(client: any TestClientProtocol, authority: TokenAuthority, db: PostgresClient, routes: Set<String>) {
        self.client = client
        self.authority = authority
        self.db = db
        self.routes = routes
    }

    public func token(_ account: String, roles: [String] = []) async throws -> String {
        try await authority.issue(account: account, roles: roles)
    }

    @discardableResult
    public func call(
        _ method: HTTPRequest.Method, _ uri: String, as account: String? = nil, roles: [String] = [],
        json: String? = nil, headers extra: HTTPFields = [:]
    ) async throws -> (status: HTTPResponse.Status, body: JSONValue, raw: String) {
        var headers = extra
        if let account { headers[.authorization] = "Bearer \(try await token(account, roles: roles))" }
        if json != nil { headers[.contentType] = "application/json" }
        let response = try await client.execute(
            uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
        let raw = String(buffer: response.body)
        let body = (try? JSONDecoder().decode(JSONValue.self, from: Data(raw.utf8))) ?? .null
        return (response.status, body, raw)
    }

    public func eventCount() async throws -> Int64 {
        let rows = try await db.query("SELECT count(*) FROM ledger_events")
        for try await n in rows.decode(Int64.self) { return n }
        return -1
    }
}

/// How the router under test reaches verdicts: by default an engine in the same process, as in
/// `ledger serve`; tests of the worker path or of the engine's seams pass their own.
public typealias ProofsFactory = @Sendable (PostgresClient, EventStore) -> ProofService

extension ProofService {
    /// As in `ledger serve`: an engine in this process.
    public static func inProcess(
        _ client: PostgresClient, _ store: EventStore, configuration: LedgerConfiguration = .testing(),
        settings: ProofEngine.Settings? = nil, hooks: ProofEngine.Hooks = .init()
    ) -> ProofService {
        let logger = Logger(label: "api-test")
        return ProofService(
            requests: ProofRequests(client: client, logger: logger, challengeLifetime: configuration.challengeLifetime.seconds),
            store: store,
            engine: ProofEngine(
                client: client, logger: logger, settings: settings ?? .init(maxGroup: configuration.verifierGroup), hooks: hooks),
            verdicts: nil, verdictWait: configuration.verdictWait)
    }
}

/// `signer`: also run a checkpointer signing with it, as `ledger serve` does.
public func withAPI(
    configuration: LedgerConfiguration = .testing(), proofs: ProofsFactory? = nil, signer: NoteSigner? = nil,
    _ body: @Sendable (API) async throws -> Void
) async throws {
    try await withTestStore { store, client, _ in
        let authority = try await TokenAuthority(secret: "test-secret-\(UUID())")
        let logger = Logger(label: "api-test")
        let events = NotificationHub(client: client, channel: EventStore.channel, logger: logger)
        let feed = FeedTail(store: store, events: events, logger: logger)
        let router = buildRouter(
            client: client, store: store, authority: authority, configuration: configuration,
            proofs: proofs?(client, store) ?? .inProcess(client, store, configuration: configuration), feed: feed, logger: logger)
        let routes = Set(
            router.routes.map { route in
                let path = route.path.description.split(separator: "/").map {
                    $0.hasPrefix(":") ? "{\($0.dropFirst())}" : $0 == "**" ? "{path}" : String($0)
                }
                return "\(route.method.rawValue.lowercased()) /\(path.joined(separator: "/"))"
            })
        let app = Application(router: router)
        // Projector workers keep the views the reads are served from up to date.
        let projector = ProjectorWorker(client: client, events: events, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await events.run() }
            group.addTask { try await projector.run() }
            group.addTask { try await feed.run() }
            if let signer {
                let checkpointer = Checkpointer(client: client, signer: signer, events: events, logger: logger, interval: .milliseconds(20))
                group.addTask { try await checkpointer.run() }
            }
            defer { group.cancelAll() }
            try await app.test(.router) { testClient in
                try await body(API(client: testClient, authority: authority, db: client, routes: routes))
            }
        }
    }
}

extension JSONValue {
    public var string: String? { if case .string(let s) = self { return s } else { return nil } }
    public var int: Int64? { if case .number(let n) = self { return Int64(n) } else { return nil } }
    public var array: [JSONValue] { if case .array(let a) = self { return a } else { return [] } }
    public var errorCode: String? { self["error"]?["code"]?.string }
}

/// A start body with share options of both kinds.
public let startBody = #"""
    {"localIdentifier":"doc-1","title":"Trip plan","initiatorHandle":"devin@example.com","initiatorName":"Devin",
     "shareOptions":{"summary":"Anyone can edit","groups":[
       {"identifier":"permission","title":"Permission","kind":"picker","options":[
         {"identifier":"rw","title":"Can make changes","selected":true},{"identifier":"ro","title":"Read only","selected":false}]},
       {"identifier":"extra","title":"Additional Settings","kind":"switches","options":[
         {"identifier":"mentions","title":"Allow mentions","selected":true},{"identifier":"comments","title":"Allow comments","selected":false}]}]}}
    """#

extension LedgerConfiguration {
    /// Defaults, with port 0, reads waiting up to 20 s for the projector (a test machine running
    /// every suite at once may lag far more than the 2 s a production read waits), and webhooks
    /// to plain http (receivers on loopback).
    public static func testing(_ change: (inout LedgerConfiguration) -> Void = { _ in }) -> LedgerConfiguration {
        var configuration = LedgerConfiguration()
        configuration.port = 0
        configuration.readWait = .seconds(20)
        configuration.webhooksAllowHTTP = true
        configuration.webhooksAllowPrivate = true  // the tests' receivers listen on loopback
        change(&configuration)
        return configuration
    }
}

/// A recipient's device answering a challenge, as `getSignedIdentityProof` would.
public func proofBody(_ person: SimulatedPerson, device: Int = 0, challenge: JSONValue, der: Bool = true) -> String {
    let bytes = Base64.decode(challenge["challenge"]!.string!)!
    let proof = person.proof(device: device)
    return """
        {"challengeId":"\(challenge["challengeId"]!.string!)","signature":"\(Base64.encode(person.sign(bytes, device: device, der: der)))",
         "proof":{"publicKey":"\(Base64.encode(proof.publicKey))","publicKeyIndex":\(proof.publicKeyIndex),
                  "inclusionHashes":[\(proof.inclusionHashes.map { "\"\(Base64.encode($0))\"" }.joined(separator: ","))]}}
        """
}

public struct UnexpectedAnswer: Error, CustomStringConvertible {
    public var description: String
}

extension API {
    /// A challenge issued to `account` (201, or this throws).
    public func challenge(_ id: String, as account: String) async throws -> JSONValue {
        let r = try await call(.post, "/v1/challenges", as: account, json: #"{"collaborationId":"\#(id)"}"#)
        guard r.status == .created else { throw UnexpectedAnswer(description: "challenge: \(r.status) \(r.raw)") }
        return r.body
    }

    /// A challenge, signed on the person's device, submitted.
    public func verify(_ id: String, _ person: SimulatedPerson, as account: String, device: Int = 0, der: Bool = true) async throws
        -> (status: HTTPResponse.Status, body: JSONValue, raw: String)
    {
        let challenge = try await challenge(id, as: account)
        return try await call(
            .post, "/v1/collaborations/\(id)/proofs", as: account, json: proofBody(person, device: device, challenge: challenge, der: der))
    }
}
