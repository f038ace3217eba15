import LedgerPostgres
import LedgerTestSupport
import Logging
import PostgresNIO
import Synchronization
import Testing

/// `NotificationHub.register(spacing:)` on a real LISTEN: what lets a worker that follows the
/// log take one step for the events of an interval (`LEDGER_FOLLOW_INTERVAL`).
@Suite("Spaced wakes")
struct SpacedWakeTests {
    @Test("after a quiet spell a notification wakes at once; sooner ones wait out the spacing, and one wake answers them all")
    func spacedWakes() async throws {
        try await withTestStore { _, client, _ in
            let logger = Logger(label: "test")
            let hub = NotificationHub(client: client, channel: "spaced_test", logger: logger)
            try await withBackground({ try? await hub.run() }, logger: logger) {
                try await waitUntil(timeout: .seconds(30), "LISTEN up") { hub.isListening }
                let spacing = Duration.seconds(2)
                let spaced = hub.register(spacing: spacing)
                let seen = hub.registerCollecting()
                defer { (spaced.cancel(), seen.cancel()) }
                func notify(_ payload: String) async throws { try await client.query("SELECT pg_notify('spaced_test', \(payload))") }

                // Quiet so far: the first notification returns well inside the spacing.
                let first = ContinuousClock.now
                try await notify("0")
                #expect(await spaced.wait(timeout: .seconds(30)))
                let woke = ContinuousClock.now
                #expect(woke - first < spacing, "the first wake waited: \(woke - first)")

                // Five more at once: the next wake comes no sooner than the spacing after the last.
                for n in 1...5 { try await notify("\(n)") }
                let received = Mutex<Set<String>>([])
                try await waitUntil(timeout: .seconds(30), "the five notifications received") {
                    let taken = seen.take()
                    return received.withLock { received in
                        received.formUnion(taken)
                        return received.isSuperset(of: ["1", "2", "3", "4", "5"])
                    }
                }
                #expect(await spaced.wait(timeout: .seconds(30)))
                #expect(ContinuousClock.now - woke >= spacing, "woken again after \(ContinuousClock.now - woke)")
                // One wake answered all five: nothing is left to wake for.
                #expect(await spaced.wait(timeout: .milliseconds(300)) == false)
            }
        }
    }
}
