import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One message of the change feed: the event's log position (its SSE `id`), its type and the
/// event as the history endpoint shows it.
public struct FeedEvent: Sendable, Hashable {
    public var id: Int64
    public var type: String
    public var entry: History.Entry
}

extension LedgerClient {
    /// The change feed (`GET /v1/feed`): every event the signed-in account may see, after
    /// position `after` (nil: from now on), then live as they are appended. When the connection
    /// drops (or the server cuts a client that fell behind), it reconnects with the last id it
    /// delivered, so no event is missed or repeated. Ends when the consuming task is cancelled,
    /// or with a `LedgerError` when the server refuses the call (a 4xx).
    public func feed(after: Int64? = nil) -> AsyncThrowingStream<FeedEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                var last = after
                var failures = 0
                while !Task.isCancelled {
                    do {
                        try await FeedConnection.open(self, after: last) { event in
                            last = event.id
                            failures = 0
                            continuation.yield(event)
                        }
                    } catch let error as LedgerError where (400..<500).contains(error.status) {
                        continuation.finish(throwing: error)
                        return
                    } catch {
                        failures += 1
                    }
                    try? await Task.sleep(for: .milliseconds(min(5_000, 100 << min(failures, 6))))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// One connection to the feed: URLSession's streamed data, parsed as Server-Sent Events.
final class FeedConnection: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var buffer = Data()
    private var status = 0
    private var errorBody = Data()
    private let messages: AsyncStream<Result<FeedEvent?, any Error>>.Continuation
    private let stream: AsyncStream<Result<FeedEvent?, any Error>>

    private override init() {
        (stream, messages) = AsyncStream.makeStream()
    }

    /// Delivers each event to `deliver` until the server ends the response or the task is cancelled.
    static func open(_ client: LedgerClient, after: Int64?, deliver: (FeedEvent) -> Void) async throws {
        var request = URLRequest(url: client.baseURL.appendingPathComponent("/v1/feed"))
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        request.setValue("Bearer \(try await client.token())", forHTTPHeaderField: "Authorization")
        if let after { request.setValue(String(after), forHTTPHeaderField: "Last-Event-ID") }
        request.timeoutInterval = 60  // the server sends a comment every 15 s
        let connection = FeedConnection()
        let session = URLSession(configuration: .ephemeral, delegate: connection, delegateQueue: nil)
        let task = session.dataTask(with: request)
        defer { session.invalidateAndCancel() }
        task.resume()
        try await withTaskCancellationHandler {
            for await message in connection.stream {
                guard let event = try message.get() else { return }
                deliver(event)
            }
        } onCancel: {
            task.cancel()
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        lock.withLock { status = (response as? HTTPURLResponse)?.statusCode ?? 0 }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let events: [FeedEvent] = lock.withLock {
            guard (200..<300).contains(status) else {
                errorBody.append(data)
                return []
            }
            buffer.append(data)
            var events: [FeedEvent] = []
            // Messages end with a blank line.
            while let end = buffer.range(of: Data("\n\n".utf8)) {
                let message = String(decoding: buffer[buffer.startIndex..<end.lowerBound], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex..<end.upperBound)
                if let event = Self.parse(message) { events.append(event) }
            }
            return events
        }
        for event in events { messages.yield(.success(event)) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (status, body) = lock.withLock { (self.status, errorBody) }
        if status != 0 && !(200..<300).contains(status) {
            let detail = try? LedgerClient.decoder.decode(ErrorBody.self, from: body)
            messages.yield(.failure(LedgerError(
                status: status, code: detail?.error.code ?? "http_\(status)", message: detail?.error.message ?? "feed refused",
                reason: detail?.error.reason)))
        } else if let error {
            messages.yield(.failure(error))
        }
        messages.yield(.success(nil))
        messages.finish()
    }

    /// One SSE message (`id:`, `event:`, `data:` lines; comments start with `:`); nil for a comment.
    static func parse(_ message: String) -> FeedEvent? {
        var (id, type, data): (Int64?, String?, String) = (nil, nil, "")
        for line in message.split(separator: "\n", omittingEmptySubsequences: true) where !line.hasPrefix(":") {
            let (field, value) = line.firstIndex(of: ":").map {
                (line[..<$0], line[line.index(after: $0)...].drop { $0 == " " })
            } ?? (line[...], ""[...])
            switch field {
            case "id": id = Int64(value)
            case "event": type = String(value)
            case "data": data += value
            default: break
            }
        }
        guard let id, let type, let entry = try? LedgerClient.decoder.decode(History.Entry.self, from: Data(data.utf8)) else { return nil }
        return FeedEvent(id: id, type: type, entry: entry)
    }
}
