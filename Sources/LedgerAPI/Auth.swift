import Foundation
import Hummingbird
import LedgerDomain
import LedgerTokens
import LedgerWebhooks
import LedgerWire
import Logging
import Metrics

/// The request context: carries the caller once the auth middleware has accepted the token.
public struct LedgerRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var caller: Caller?
    /// The id and secret a registered webhook takes, where a front registers one webhook in
    /// several logs under one name: set by that front, never from the request.
    public var webhookSeed: WebhookRegistry.Seed?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        caller = nil
    }

    /// JSON out with RFC 3339 times (microseconds, as the log records them) and stable key order.
    public var responseEncoder: JSONEncoder { APIJSON.encoder() }

    /// The caller, or 401.
    public func requireCaller() throws -> Caller {
        guard let caller else { throw DomainError(.unauthorized, "a bearer token is required") }
        return caller
    }
}

/// Checks `Authorization: Bearer <JWT>`; missing, expired and forged tokens get 401 (a missing
/// one passes, without a caller, where the token is `optional`), as does a token whose account
/// is in the pseudonyms' namespace (`reserved_account`).
struct AuthMiddleware: RouterMiddleware {
    /// Refused tokens, for `/metrics`.
    static let failures = Counter(label: "ledger_auth_failures_total")
    let authority: TokenAuthority
    var optional = false

    func handle(
        _ request: Request, context: LedgerRequestContext,
        next: (Request, LedgerRequestContext) async throws -> Response
    ) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            if optional { return try await next(request, context) }
            throw DomainError(.unauthorized, "missing Authorization: Bearer <token>")
        }
        guard header.lowercased().hasPrefix("bearer "), header.count > 7 else {
            throw DomainError(.unauthorized, "the Authorization header must be Bearer <token>")
        }
        let token = String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        let caller: Caller
        do {
            caller = try await authority.verify(token)
        } catch let refusal as TokenAuthority.Refusal {
            Self.failures.increment()
            throw DomainError(refusal.code, refusal.reason)
        }
        var context = context
        context.caller = caller
        // No account in log lines: with the events' times they would link a person to a
        // pseudonym an erasure cut loose (SPEC "Nothing links the person back").
        return try await next(request, context)
    }
}
