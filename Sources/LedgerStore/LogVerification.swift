import LedgerDomain

/// Walks the whole hash chain from the first event and reports the first mismatch.
public struct LogVerification: Sendable {
    public struct Report: Sendable, Equatable {
        /// Events whose hash was recomputed and matched.
        public var checked: Int64
        public var headPosition: Int64
        /// The first break in the chain, nil when the log is intact.
        public var failure: HashChain.Failure?
    }

    let store: any EventStore
    let batchSize: Int

    public init(store: any EventStore, batchSize: Int = 10_000) {
        self.store = store
        self.batchSize = batchSize
    }

    public func run(progress: (@Sendable (Int64, Int64) -> Void)? = nil) async throws -> Report {
        let head = try await store.head()
        var verifier = HashChain.Verifier()
        var after: Int64 = 0
        while after < head.position {
            let events = try await store.readAll(after: after, limit: batchSize)
            if events.isEmpty { break }
            for event in events where event.position <= head.position {
                if let failure = verifier.check(event) {
                    return Report(checked: verifier.checked, headPosition: head.position, failure: failure)
                }
            }
            after = events.last!.position
            progress?(min(after, head.position), head.position)
        }
        if verifier.expectedPosition <= head.position {
            return Report(
                checked: verifier.checked, headPosition: head.position,
                failure: .init(position: verifier.expectedPosition, reason: .missing(found: nil)))
        }
        if verifier.previousHash != head.hash {
            return Report(
                checked: verifier.checked, headPosition: head.position,
                failure: .init(position: head.position, reason: .headMismatch))
        }
        return Report(checked: verifier.checked, headPosition: head.position, failure: nil)
    }
}
