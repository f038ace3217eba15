import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A response read as it arrives, through a URLSession of its own (its delegate gets the
/// pieces): the default `LedgerTransport.stream`. The session is invalidated when the body's
/// stream ends or its consumer goes away.
final class URLSessionStream: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var head: CheckedContinuation<Int, any Error>?
    private let pieces: AsyncThrowingStream<Data, any Error>.Continuation
    let body: AsyncThrowingStream<Data, any Error>

    private override init() {
        (body, pieces) = AsyncThrowingStream.makeStream()
    }

    static func open(_ request: URLRequest) async throws -> (status: Int, body: AsyncThrowingStream<Data, any Error>) {
        let delegate = URLSessionStream()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        let task = session.dataTask(with: request)
        delegate.pieces.onTermination = { _ in
            task.cancel()
            session.invalidateAndCancel()
        }
        do {
            let status = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    delegate.lock.withLock { delegate.head = continuation }
                    task.resume()
                }
            } onCancel: {
                task.cancel()
            }
            return (status, delegate.body)
        } catch {
            delegate.pieces.finish()  // no body for anyone: the session is invalidated now
            throw error
        }
    }

    private func answerHead(_ result: Result<Int, any Error>) {
        lock.withLock {
            defer { head = nil }
            return head
        }?.resume(with: result)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        answerHead(.success((response as? HTTPURLResponse)?.statusCode ?? 0))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        pieces.yield(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        answerHead(.failure(error ?? URLError(.badServerResponse)))
        pieces.finish(throwing: error)
    }
}
