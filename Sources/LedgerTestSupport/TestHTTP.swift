import AsyncHTTPClient
import Foundation
import LedgerClient
import NIOCore
import NIOFoundationEssentialsCompat
import NIOHTTP1

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// HTTP for tests, over AsyncHTTPClient (NIO), never `URLSession`. On Linux, FoundationNetworking's
/// `URLSession.shared`, which every test's requests shared, wedged the whole test process now and
/// then: every task waiting, no socket or timer of its requests watched, the run never ending
/// (issue 48's freeze; earlier, the witness suite and the shutdown test had left it for the same
/// reason). Every request here has a deadline.
public enum TestHTTP {
    public static let deadline: TimeAmount = .seconds(60)

    /// The tests' client: the shared one's settings, but idle connections closed after 20 s, well
    /// before the server's 60 s. The shared client keeps them 600 s, so a connection idle past a
    /// minute (a test building its data through SQL meanwhile) could be taken from the pool just
    /// as the server closed it: the request failed with "connection reset by peer".
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.connectionPool = .init(idleTimeout: .seconds(20))
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    public static func data(from url: URL) async throws -> (Data, HTTPURLResponse) {
        try await data(for: URLRequest(url: url))
    }

    public static func data(for request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (url, outgoing) = try converted(request)
        let (response, body) = try await exchange(outgoing)
        var headers: [String: String] = [:]
        for (name, value) in response.headers { headers[name] = headers[name].map { "\($0), \(value)" } ?? value }
        guard
            let answered = HTTPURLResponse(url: url, statusCode: Int(response.status.code), httpVersion: "HTTP/1.1", headerFields: headers)
        else {
            throw URLError(.badServerResponse)
        }
        return (Data(buffer: body), answered)
    }

    static func converted(_ request: URLRequest) throws -> (URL, HTTPClientRequest) {
        guard let url = request.url else { throw URLError(.badURL) }
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.httpMethod ?? "GET")
        for (name, value) in request.allHTTPHeaderFields ?? [:] { outgoing.headers.replaceOrAdd(name: name, value: value) }
        if let body = request.httpBody { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        return (url, outgoing)
    }

    /// A response streamed (the change feed): the head within `deadline`, then the body's
    /// pieces for as long as `streamDeadline` (a test's feed ends by its consumer long before).
    public static let streamDeadline: TimeAmount = .minutes(10)

    public static func stream(_ request: URLRequest) async throws -> (status: Int, body: AsyncThrowingStream<Data, any Error>) {
        let (_, outgoing) = try converted(request)
        let response: HTTPClientResponse
        do {
            response = try await client.execute(outgoing, timeout: streamDeadline)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw URLError(.networkConnectionLost, userInfo: [NSUnderlyingErrorKey: error])
        }
        let (body, pieces) = AsyncThrowingStream.makeStream(of: Data.self)
        let reader = Task {
            do {
                for try await buffer in response.body { pieces.yield(Data(buffer: buffer)) }
                pieces.finish()
            } catch {
                pieces.finish(throwing: error)
            }
        }
        pieces.onTermination = { _ in reader.cancel() }
        return (Int(response.status.code), body)
    }

    /// A failure to get an answer is thrown as a `URLError`, as the SDK's default transport
    /// throws it, so the SDK retries the same failures (`LedgerClient.isRetryable`).
    static func exchange(_ request: HTTPClientRequest) async throws -> (HTTPClientResponse, ByteBuffer) {
        do {
            let response = try await client.execute(request, timeout: deadline)
            return (response, try await response.body.collect(upTo: 256 << 20))
        } catch let error as HTTPClientError where error == .deadlineExceeded {
            throw URLError(.timedOut, userInfo: [NSUnderlyingErrorKey: error])
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw URLError(.networkConnectionLost, userInfo: [NSUnderlyingErrorKey: error])
        }
    }
}

/// The SDK's requests and feeds over `TestHTTP` (`LedgerClient`'s default is `URLSession`).
public struct HTTPClientTransport: LedgerTransport {
    public init() {}

    public func send(_ request: URLRequest) async throws -> (body: Data, status: Int) {
        let (body, response) = try await TestHTTP.data(for: request)
        return (body, response.statusCode)
    }

    public func stream(_ request: URLRequest) async throws -> (status: Int, body: AsyncThrowingStream<Data, any Error>) {
        try await TestHTTP.stream(request)
    }
}
