import Foundation
import LedgerClient
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One keep-alive HTTP/1.1 connection carrying a `LedgerClient`'s requests, one at a time.
///
/// For load generators: on Linux, URLSession drives every transfer of a process from one
/// thread (libcurl's multi handle), which caps a benchmark's clients near one core before the
/// server is busy. This transport runs each connection on NIO's event loops instead.
final class NIOTransport: LedgerTransport {
    let channel: any Channel
    let host: String

    private init(channel: any Channel, host: String) {
        self.channel = channel
        self.host = host
    }

    static func connect(host: String, port: Int) async throws -> NIOTransport {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(ExchangeHandler())
                }
            }
            .connect(host: host, port: port).get()
        return NIOTransport(channel: channel, host: "\(host):\(port)")
    }

    func send(_ request: URLRequest) async throws -> (body: Data, status: Int) {
        guard let url = request.url else { throw URLError(.badURL) }
        var head = HTTPRequestHead(
            version: .http1_1, method: HTTPMethod(rawValue: request.httpMethod ?? "GET"),
            uri: url.path.isEmpty ? "/" : url.path + (url.query.map { "?\($0)" } ?? ""))
        head.headers.add(name: "Host", value: host)
        for (name, value) in request.allHTTPHeaderFields ?? [:] { head.headers.add(name: name, value: value) }
        let body = request.httpBody.map { ByteBuffer(bytes: $0) }
        head.headers.add(name: "Content-Length", value: "\(body?.readableBytes ?? 0)")
        let answered = channel.eventLoop.makePromise(of: Exchange.Answer.self)
        channel.writeAndFlush(Exchange(head: head, body: body, answered: answered), promise: nil)
        let answer = try await answered.futureResult.get()
        return (Data(answer.body.readableBytesView), answer.status)
    }

    func close() async {
        try? await channel.close()
    }
}

/// A request and where its response goes.
struct Exchange: Sendable {
    struct Answer: Sendable {
        var status: Int
        var body: ByteBuffer
    }
    var head: HTTPRequestHead
    var body: ByteBuffer?
    var answered: EventLoopPromise<Answer>
}

/// Writes each exchange's request and completes it with the next response.
final class ExchangeHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = Exchange
    typealias OutboundOut = HTTPClientRequestPart

    private var waiting: [EventLoopPromise<Exchange.Answer>] = []
    private var status = 0
    private var body = ByteBuffer()

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let exchange = unwrapOutboundIn(data)
        guard context.channel.isActive else {
            // Closed before this request: nothing will answer it.
            exchange.answered.fail(ChannelError.ioOnClosedChannel)
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        waiting.append(exchange.answered)
        context.write(wrapOutboundOut(.head(exchange.head)), promise: nil)
        if let body = exchange.body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        context.write(wrapOutboundOut(.end(nil)), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
            body.clear()
        case .body(var part):
            body.writeBuffer(&part)
        case .end:
            guard !waiting.isEmpty else { return }
            waiting.removeFirst().succeed(.init(status: status, body: body))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }

    private func fail(_ error: any Error) {
        let failed = waiting
        waiting.removeAll()
        for promise in failed { promise.fail(error) }
    }
}
