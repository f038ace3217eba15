import Foundation
import HTTPTypes
import Hummingbird
import LedgerAPI
import LedgerDomain
import LedgerWire
import Logging
import NIOCore

/// A write of every shard (an erasure, a webhook of every collaboration registered or deleted)
/// or an export, cut short: some shards did their part and others did not, a shard unavailable
/// (not asked) or failing or refusing when asked. Its answer says what each shard did
/// (`CutShort`), so an operator or a retry knows what happened (docs/SCALING.md, "What a fan-out
/// cut short answers").
extension ShardFanOut {
    /// Why a shard did not do its part: its answer (status, headers, body), and that body's error.
    struct Failure: Sendable {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let body: ByteBuffer
        let detail: ErrorBody.Detail
        /// Whether the shard was asked: one whose database did not answer (`NotAsked`) committed
        /// nothing. One let go while it waits on a shard that stopped answering was asked.
        var asked = true

        /// A refusal of the request (4xx): the shard committed nothing, and the same request
        /// asked again is refused again.
        var isRefusal: Bool { (400..<500).contains(status.code) }

        /// The shard's answer as it gave it.
        var response: Response { Response(status: status, headers: headers, body: .init(byteBuffer: body)) }

        /// `response`'s failure, its body read as the catalogue's error.
        static func of(_ response: Response) async throws -> Failure {
            let body = try await ShardFanOut.body(of: response)
            let detail =
                (try? APIJSON.decoder().decode(ErrorBody.self, from: Data(body.readableBytesView)))?.error
                ?? ErrorBody.Detail(
                    code: (response.status.code < 500 ? ErrorCode.httpError : .internalError).rawValue,
                    message: "the shard answered \(response.status.code)")
            return Failure(status: response.status, headers: response.headers, body: body, detail: detail)
        }
    }

    /// A shard's part: done, with what it answered, or not.
    enum Outcome<Done> {
        case done(Done)
        case failed(Failure)

        var done: Done? {
            if case .done(let done) = self { return done }
            return nil
        }

        var failure: Failure? {
            if case .failed(let failure) = self { return failure }
            return nil
        }
    }

    /// A shard not asked, as its database did not answer (nil in `ShardRouter.everyShardAsked`).
    struct NotAsked: Error {
        let shard: Int
    }

    /// Asks shard `index` (`shard`, nil when its database does not answer: not asked, failed as
    /// unavailable) for its part; `read` takes an answer that does it, nil for one that does not.
    /// A refusal the shard throws is its answer; anything else it throws, a failure of its own.
    static func ask<Done>(
        _ shard: Responder?, index: Int, _ request: Request, context: LedgerRequestContext, read: (Response) async throws -> Done?
    ) async throws -> Outcome<Done> {
        let response: Response
        do {
            guard let shard else { throw NotAsked(shard: index) }
            response = try await shard(request, context)
        } catch is NotAsked {
            return .failed(try await unavailable(index, request: request, context: context))
        } catch let refusal as DomainError {
            response = try refusal.response(from: request, context: context)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            context.logger.error("a shard's part of a request of every shard failed", metadata: ["shard": "\(index)", "error": "\(error)"])
            response = try DomainError(.internalError, "shard \(index)'s answer failed").response(from: request, context: context)
        }
        if let done = try await read(response) { return .done(done) }
        return .failed(try await Failure.of(response))
    }

    /// Shard `index` does not answer: not asked, refused as one shard's request is.
    static func unavailable(_ index: Int, request: Request, context: LedgerRequestContext) async throws -> Failure {
        let refusal = DomainError(.databaseUnavailable, "shard \(index) is unavailable for the moment", retryAfter: 1)
        var failure = try await Failure.of(try refusal.response(from: request, context: context))
        failure.asked = false
        return failure
    }

    /// Every shard asked in turn for its part (`request` with `body`, anew for each), those that
    /// fail as well as those that do it: the outcomes, by shard; or, when a shard refuses the
    /// request (4xx) before any shard did its part, that refusal, as one database answers it
    /// (every shard checks a request alike, so nothing is done anywhere).
    static func askEvery<Done>(
        _ shards: [Responder?], _ request: Request, body: ByteBuffer = ByteBuffer(), context: LedgerRequestContext,
        read: (Response) async throws -> Done?
    ) async throws -> Result<[Outcome<Done>], Refusal> {
        var outcomes: [Outcome<Done>] = []
        for (index, shard) in shards.enumerated() {
            let asked = Request(head: request.head, body: RequestBody(buffer: body))
            let outcome = try await ask(shard, index: index, asked, context: context, read: read)
            if let failure = outcome.failure, failure.isRefusal, !outcomes.contains(where: { $0.done != nil }) {
                return .failure(Refusal(response: failure.response))
            }
            outcomes.append(outcome)
        }
        return .success(outcomes)
    }

    /// The answer to a fan-out cut short: when every shard that failed refused the request (4xx),
    /// the first refusal's status and code; else 503 `cut_short` with `Retry-After`, as a retry
    /// may finish it. Either way the catalogue's error, `message` first, with `shards` (`parts`).
    static func cutShort(
        _ message: String, parts: [CutShort.Part], failures: [Failure], request: Request, context: LedgerRequestContext
    ) throws -> Response {
        var headers: HTTPFields = [.retryAfter: "1"]
        var status = HTTPResponse.Status.serviceUnavailable
        var error = ErrorBody.Detail(code: ErrorCode.cutShort.rawValue, message: message)
        if let refusal = failures.first, failures.allSatisfy(\.isRefusal) {
            (headers, status) = (refusal.headers, refusal.status)
            error = ErrorBody.Detail(
                code: refusal.detail.code, message: message + "; the shard's refusal: " + refusal.detail.message,
                reason: refusal.detail.reason)
        }
        headers[.contentLength] = nil
        headers[.contentType] = "application/json; charset=utf-8"
        context.logger.warning(
            "a request of every shard was cut short",
            metadata: [
                "method": "\(request.method)", "done": "\(parts.filter(\.completed).map(\.shard))",
                "not done": "\(parts.filter { !$0.completed }.map(\.shard))",
            ])
        let data = try APIJSON.encoder().encode(CutShort(error: error, shards: parts))
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The part of a shard that failed, with its error.
    static func failedPart(_ index: Int, _ failure: Failure) -> CutShort.Part {
        CutShort.Part(shard: index, completed: false, error: failure.detail)
    }

    /// "shard 0", "shards 0 and 1", "shards 0, 1 and 2"; "no shard".
    static func named(_ shards: [Int]) -> String {
        switch shards.count {
        case 0: "no shard"
        case 1: "shard \(shards[0])"
        default: "shards " + shards.dropLast().map(String.init).joined(separator: ", ") + " and \(shards.last!)"
        }
    }
}
