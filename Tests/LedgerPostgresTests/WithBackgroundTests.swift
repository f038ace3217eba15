import LedgerPostgres
import LedgerTestSupport
import Logging
import Synchronization
import Testing

@Suite("A background job's lifetime (a pool's run)")
struct WithBackgroundTests {
    struct Refused: Error {}
    let logger = Logger(label: "test")

    @Test("the job runs during the body, is cancelled after it, and is waited for when it stops")
    func stopsWithTheBody() async throws {
        let events = Mutex<[String]>([])
        let job: @Sendable () async -> Void = {
            events.withLock { $0.append("started") }
            try? await Task.sleep(for: .seconds(60))
            events.withLock { $0.append("stopped") }
        }
        let value = try await withBackground(job, logger: logger) {
            try await waitUntil("the job runs") { events.withLock { $0 == ["started"] } }
            return 7
        }
        #expect(value == 7)
        #expect(events.withLock { $0 } == ["started", "stopped"], "the job ended before withBackground returned")
    }

    @Test("a body's error is thrown once the job is stopped")
    func bodyError() async throws {
        let stopped = Mutex(false)
        await #expect(throws: Refused.self) {
            let job: @Sendable () async -> Void = {
                try? await Task.sleep(for: .seconds(60))
                stopped.withLock { $0 = true }
            }
            try await withBackground(job, logger: logger) { () async throws -> Int in throw Refused() }
        }
        #expect(stopped.withLock { $0 })
    }

    @Test("a job ignoring cancellation (a pool's run stuck on a closed connection) is abandoned after the bound")
    func abandonsAStuckJob() async throws {
        let hang = Hang()
        defer { hang.release() }
        let value = try await withBackground(hang.forever, stopWithin: .milliseconds(200), logger: logger) {
            try await waitUntil("the job is parked") { hang.entered.withLock { $0 } }
            return 3
        }
        #expect(value == 3)
        #expect(hang.parked.withLock { $0.count } == 1, "the stuck job is still parked: abandoned, not awaited")
    }
}
