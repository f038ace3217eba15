import Foundation
import HTTPTypes
import LedgerDeviceSimulator
import LedgerDomain
import LedgerTokens
import LedgerWire
import NIOCore
import PostgresNIO

/// An answer to a test's request: its status, headers and whole body.
public struct TestAnswer: Sendable {
    public var status: HTTPResponse.Status
    public var headers: HTTPFields
    public var body: ByteBuffer

    public init(status: HTTPResponse.Status, headers: HTTPFields, body: ByteBuffer) {
        (self.status, self.headers, self.body) = (status, headers, body)
    }
}

/// Calls to a ledger under test, as an app makes them, with tokens for any account: over a live
/// server's port (`LiveServer`, what `ledger serve` runs) or a router's test client (`RouterAPI`,
/// for a test that needs a router alone).
public protocol LedgerCalls: Sendable {
    var authority: TokenAuthority { get }
    /// The ledger's database, as its owner reaches it.
    var db: PostgresClient { get }
    /// One request, as sent (a path and query, relative to the ledger).
    func execute(uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer?) async throws -> TestAnswer
}

extension LedgerCalls {
    /// One request without a body.
    public func execute(uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:]) async throws -> TestAnswer {
        try await execute(uri: uri, method: method, headers: headers, body: nil)
    }

    public func token(_ account: String, roles: [String] = []) async throws -> String {
        try await authority.issue(account: account, roles: roles)
    }

    /// A request as `account` (none: without a token), with a JSON body if given.
    @discardableResult
    public func call(
        _ method: HTTPRequest.Method, _ uri: String, as account: String? = nil, roles: [String] = [],
        json: String? = nil, headers extra: HTTPFields = [:]
    ) async throws -> (status: HTTPResponse.Status, body: JSONValue, raw: String) {
        var headers = extra
        if let account { headers[.authorization] = "Bearer \(try await token(account, roles: roles))" }
        if json != nil { headers[.contentType] = "application/json" }
        let response = try await execute(uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
        let raw = String(buffer: response.body)
        let body = (try? JSONDecoder().decode(JSONValue.self, from: Data(raw.utf8))) ?? .null
        return (response.status, body, raw)
    }

    public func eventCount() async throws -> Int64 {
        let rows = try await db.query("SELECT count(*) FROM ledger_events")
        for try await n in rows.decode(Int64.self) { return n }
        return -1
    }

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

public struct UnexpectedAnswer: Error, CustomStringConvertible {
    public var description: String
}
