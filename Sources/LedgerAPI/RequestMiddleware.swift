import Foundation
import HTTPTypes
import Hummingbird
import LedgerDomain
import LedgerWire
import Logging

/// Gives every request an id and writes one access-log line per request.
///
/// The id is the caller's `X-Request-Id` when it is a plain token (1–128 of `A-Z a-z 0-9 . _ : -`),
/// otherwise the one Hummingbird generated. A caller's id is free text it chose, so the ledger
/// keeps only its SHA-256 (lowercase hex, `PersonalData.clientTextDigest`; SPEC "Personal data and
/// erasure"): that is the id (`context.id`) in the logger's metadata (`hb.request.id`) of every line
/// logged for the request and in the `requestId` of the events the request appends. The response's
/// `X-Request-Id` echoes what the caller sent (or the generated id), so a client's report, a log
/// line and a log entry meet once the client hashes its id.
struct RequestIdMiddleware: RouterMiddleware {
    typealias Context = LedgerRequestContext
    static let header = HTTPField.Name("X-Request-Id")!

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        var echoed: String?
        if let incoming = request.headers[Self.header], Self.isAcceptable(incoming) {
            context.logger[metadataKey: "hb.request.id"] = .string(PersonalData.clientTextDigest(incoming))
            echoed = incoming
        }
        let started = ContinuousClock.now
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        response.headers[Self.header] = echoed ?? context.id
        let elapsed = ContinuousClock.now - started
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        context.logger.log(
            level: response.status.code >= 500 ? .error : .info, "request",
            metadata: [
                "method": "\(request.method)", "path": "\(request.uri.path)",
                "route": "\(context.endpointPath ?? "-")", "status": "\(response.status.code)",
                "duration_ms": "\(String(format: "%.2f", milliseconds))",
            ])
        return response
    }

    static func isAcceptable(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"),
                    UInt8(ascii: "-"):
                    true
                default: false
                }
            }
    }
}

/// A known path asked with a method it does not serve gets 405 with `Allow`, not 404.
///
/// Added to the router after every route, so it wraps only the not-found responder: it runs
/// just for requests no route took.
struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Each route's path and the methods it serves.
    let routes: [(path: RouterPath, methods: [HTTPRequest.Method])]

    init(routes: [Router<Context>.RouteDescription]) {
        var byPath: [String: (path: RouterPath, methods: [HTTPRequest.Method])] = [:]
        for route in routes {
            byPath[route.path.description, default: (route.path, [])].methods.append(route.method)
        }
        self.routes = byPath.values.sorted { $0.path.description < $1.path.description }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let segments = request.uri.path.split(separator: "/", omittingEmptySubsequences: true)
        let allowed = routes.filter { route in
            route.path.count == segments.count && zip(route.path, segments).allSatisfy { element, segment in element ~= segment }
        }.flatMap(\.methods)
        guard !allowed.isEmpty else { return try await next(request, context) }
        let allow = Set(allowed.map(\.rawValue)).sorted().joined(separator: ", ")
        throw DomainError(
            .methodNotAllowed, "\(request.method) is not allowed on \(request.uri.path); allowed: \(allow)", allow: allow)
    }
}
