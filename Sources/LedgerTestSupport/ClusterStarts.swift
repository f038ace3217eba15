/// At most two PostgreSQL clusters set up at once in the test process. Tests run in parallel,
/// and on a two-core machine half a dozen initdb and pg_basebackup runs starting together
/// starved every other test for 15 s and more (seen: deadlines of 10 s missed by queries that
/// take milliseconds). Only the setup waits its turn; the clusters then run side by side.
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
