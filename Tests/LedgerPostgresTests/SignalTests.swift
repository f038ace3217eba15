import LedgerTestSupport
import Logging
import PostgresNIO
import Testing

@testable import LedgerPostgres

/// Waits on notifications, timed on a manual clock: no test here waits for real time. Its
/// deadlines bound only how long a task takes to be scheduled: a minute, since these run as the
/// suite starts, when every suite's setup keeps both cores busy (a whole run once lost them at 10 s).
@Suite("Signals and their timeouts")
struct SignalTests {
    @Test("a wait times out when its clock reaches the timeout, not a moment before")
    func timeout() async throws {
        let (clock, signal) = (ManualClock(), Signal())
        let waiting = Task { await signal.wait(timeout: .seconds(10), clock: clock) }
        try await waitUntil(timeout: .seconds(60), "the wait asleep on the clock") { clock.sleepers == 1 }
        clock.advance(by: .seconds(9) + .milliseconds(999))
        #expect(clock.sleepers == 1, "a millisecond early: still waiting")
        clock.advance(by: .milliseconds(1))
        #expect(await waiting.value == false)
    }

    @Test("a raise wakes a waiter at once, and one raised before the wait is not lost")
    func raise() async throws {
        let (clock, signal) = (ManualClock(), Signal())
        let waiting = Task { await signal.wait(timeout: .seconds(10), clock: clock) }
        try await waitUntil(timeout: .seconds(60), "the wait asleep on the clock") { clock.sleepers == 1 }
        signal.raise()
        #expect(await waiting.value == true, "woken with the clock standing still")
        signal.raise()
        #expect(await signal.wait(timeout: .seconds(10), clock: clock) == true, "raised before the wait")
        try await waitUntil(timeout: .seconds(60), "the timers cancelled") { clock.sleepers == 0 }
    }

    @Test("a raise after a wait timed out stays for the next wait")
    func raiseAfterTimeout() async throws {
        let (clock, signal) = (ManualClock(), Signal())
        let waiting = Task { await signal.wait(timeout: .seconds(1), clock: clock) }
        try await waitUntil(timeout: .seconds(60), "the wait asleep on the clock") { clock.sleepers == 1 }
        clock.advance(by: .seconds(1))
        #expect(await waiting.value == false)
        signal.raise()
        #expect(await signal.wait(timeout: .seconds(1), clock: clock) == true)
    }

    @Test("a hub's waiters time out on the hub's clock (the services' sleeps between notifications)")
    func hubClock() async throws {
        let clock = ManualClock()
        // Never run: registering and waiting need no connection.
        let client = PostgresClient(
            configuration: .init(host: "127.0.0.1", port: 1, username: "nobody", password: nil, database: nil, tls: .disable))
        let hub = NotificationHub(client: client, channel: "ledger_test", logger: Logger(label: "test"), clock: clock)
        let subscription = hub.register()
        defer { subscription.cancel() }
        let waiting = Task { await subscription.wait(timeout: .seconds(60)) }
        try await waitUntil(timeout: .seconds(60), "the wait asleep on the hub's clock") { clock.sleepers == 1 }
        clock.advance(by: .seconds(60))
        #expect(await waiting.value == false)
    }
}
