import Foundation
import HTTPTypes
import Hummingbird
import LedgerWire
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// An app backend's webhook endpoint on loopback: records every delivery it gets at
/// `/<path>`, answers the statuses scripted for that path (then 200), and can hang one
/// request (the delivery of a given position, the first time) to catch a worker mid-delivery.
public final class WebhookReceiver: Sendable {
    public struct Delivery: Sendable {
        public var path: String
        public var signature: String
        public var deliveryId: String
        public var body: Data
        public var entry: History.Entry
        /// What the receiver answered (nil while hanging).
        public var status: Int?
    }

    private let state = Mutex<(deliveries: [Delivery], scripts: [String: [Int]], hangAt: Int64?)>(([], [:], nil))
    public let hang = Hang()

    public init() {}

    public var deliveries: [Delivery] { state.withLock { $0.deliveries } }
    /// The deliveries to `path` answered 2xx, in the order they came.
    public func accepted(_ path: String) -> [Delivery] {
        deliveries.filter { $0.path == path && ($0.status ?? 0) < 300 && $0.status != nil }
    }
    public func script(_ path: String, _ statuses: [Int]) { state.withLock { $0.scripts[path] = statuses } }
    public func hang(at position: Int64) { state.withLock { $0.hangAt = position } }

    /// Runs the receiver on a free port for `body`.
    public func serving<T: Sendable>(_ body: @Sendable (URL) async throws -> T) async throws -> T {
        let router = Router()
        router.post(":path") { request, context -> Response in
            let path = try context.parameters.require("path")
            let body = try await request.body.collect(upTo: 1 << 20)
            let data = Data(body.readableBytesView)
            let entry = try APIJSON.decoder().decode(History.Entry.self, from: data)
            let delivery = Delivery(
                path: path, signature: request.headers[HTTPField.Name(WebhookSignature.headerName)!] ?? "",
                deliveryId: request.headers[HTTPField.Name(WebhookSignature.deliveryHeaderName)!] ?? "", body: data, entry: entry)
            let (index, status, hangs) = self.state.withLock { state -> (Int, Int, Bool) in
                state.deliveries.append(delivery)
                let hangs = state.hangAt == entry.position
                if hangs { state.hangAt = nil }
                let status = state.scripts[path]?.isEmpty == false ? state.scripts[path]!.removeFirst() : 200
                return (state.deliveries.count - 1, status, hangs)
            }
            if hangs { await self.hang.forever() }
            self.state.withLock { $0.deliveries[index].status = status }
            return Response(status: .init(code: status))
        }
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { listening.yield($0.localAddress?.port ?? 0) }, logger: Logger(label: "webhook-receiver"))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.runService(gracefulShutdownSignals: []) }
            defer { group.cancelAll() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw CancellationError() }  // the receiver stopped before listening
            return try await body(URL(string: "http://127.0.0.1:\(port)")!)
        }
    }
}
