import Foundation
import Logging
import Hummingbird
import JWTKit
import LedgerWire
import Metrics

/// The claims of a ledger token: `sub` is the account, `roles` may hold "auditor".
public struct LedgerClaims: JWTPayload, Equatable {
    public var sub: SubjectClaim
    public var exp: ExpirationClaim
    public var roles: [String]?

    public init(account: String, roles: [String] = [], expires: Date) {
        self.sub = SubjectClaim(value: account)
        self.exp = ExpirationClaim(value: expires)
        self.roles = roles.isEmpty ? nil : roles
    }

    public func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

/// HS256 tokens with the configured secret.
public struct TokenAuthority: Sendable {
    let keys: JWTKeyCollection

    public struct WeakSecret: Error, CustomStringConvertible {
        public var description: String { "LEDGER_JWT_SECRET must be at least 32 bytes (HS256 key size)" }
    }

    /// A fresh secret: 32 random bytes, hex (development secrets, throwaway ledgers).
    public static func randomSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    public init(secret: String) async throws {
        guard secret.utf8.count >= 32 else { throw WeakSecret() }
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        self.keys = keys
    }

    public func issue(account: String, roles: [String] = [], validFor: TimeInterval = 30 * 24 * 3600) async throws -> String {
        try await keys.sign(LedgerClaims(account: account, roles: roles, expires: Date().addingTimeInterval(validFor)))
    }

    func verify(_ token: String) async throws -> LedgerClaims {
        try await keys.verify(token, as: LedgerClaims.self)
    }
}

/// The authenticated caller.
public struct Caller: Sendable, Equatable {
    public var account: String
    public var roles: Set<String>
    public var isAuditor: Bool { roles.contains("auditor") }

    public init(account: String, roles: Set<String> = []) {
        self.account = account
        self.roles = roles
    }

    /// The operator at the command line (`ledger audit`): reads like an auditor.
    public static let operatorAuditor = Caller(account: "operator", roles: ["auditor"])
}

/// The request context: carries the caller once the auth middleware has accepted the token.
public struct LedgerRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var caller: Caller?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        caller = nil
    }

    /// JSON out with RFC 3339 times (microseconds, as the log records them) and stable key order.
    public var responseEncoder: JSONEncoder { APIJSON.encoder() }

    /// The caller, or 401.
    public func requireCaller() throws -> Caller {
        guard let caller else { throw APIError(.unauthorized, "unauthorized", "a bearer token is required") }
        return caller
    }
}

/// Checks `Authorization: Bearer <JWT>`; missing, expired and forged tokens get 401.
struct AuthMiddleware: RouterMiddleware {
    let authority: TokenAuthority

    func handle(
        _ request: Request, context: LedgerRequestContext,
        next: (Request, LedgerRequestContext) async throws -> Response
    ) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            throw APIError(.unauthorized, "unauthorized", "missing Authorization: Bearer <token>")
        }
        guard header.lowercased().hasPrefix("bearer "), header.count > 7 else {
            throw APIError(.unauthorized, "unauthorized", "the Authorization header must be Bearer <token>")
        }
        let token = String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        let claims: LedgerClaims
        do {
            claims = try await authority.verify(token)
        } catch {
            AuthFailures.count.increment()
            throw APIError(.unauthorized, "invalid_token", "the token is invalid or expired")
        }
        let account = claims.sub.value
        guard !account.isEmpty, account.count <= 256, !account.unicodeScalars.contains(where: { $0.value == 0 }) else {
            throw APIError(.unauthorized, "invalid_token", "the token has no usable subject")
        }
        var context = context
        context.caller = Caller(account: account, roles: Set(claims.roles ?? []))
        context.logger[metadataKey: "account"] = .string(account)
        return try await next(request, context)
    }
}
