/// At most two PostgreSQL clusters set up at once (initdb, or pg_basebackup for a standby) by
/// the test support's cluster helpers. Tests run in parallel, and on a two-core machine half a
/// dozen set-ups starting together starve every other test for seconds. Only the set-up waits
/// its turn; the clusters then run side by side.
actor ClusterStarts {
    static let shared = ClusterStarts(permits: 2)

    private var permits: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(permits: Int) {
        self.permits = permits
    }

    /// Runs `setup` once a permit is free.
    func run<T: Sendable>(_ setup: @Sendable () async throws -> T) async throws -> T {
        await acquire()
        defer { release() }
        return try await setup()
    }

    private func acquire() async {
        if permits > 0 {
            permits -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty { permits += 1 } else { waiting.removeFirst().resume() }
    }
}
