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
    @Test("a wake after quiet comes at once; sooner ones wait out the spacing, one wake for all")
    func spacedWakes() async throws {
        try await withTestStore { _, client, _ in
            let logger = Logger(label: "test")
            let hub = NotificationHub(client: client, channel: "spaced_test", logger: logger)
            try await withBackground({ try? await hub.run() }, logger: logger) {
                try await waitUntil(timeout: .seconds(30), "LISTEN up") { hub.isListening }
                // Long enough that the last check tells "at once" from "most of a spacing" on a
                // loaded machine (the whole suite runs at once: a query there can take a second).
                let spacing = Duration.seconds(3)
                let spaced = hub.register(spacing: spacing)
                let seen = hub.registerCollecting()
                defer { (spaced.cancel(), seen.cancel()) }
                let received = Mutex<Set<String>>([])
                /// Sends `payloads`, each its own notification, and waits until the hub has them all.
                func notify(_ payloads: [String]) async throws {
                    for payload in payloads { try await client.query("SELECT pg_notify('spaced_test', \(payload))") }
                    try await waitUntil(timeout: .seconds(30), "notifications \(payloads) received") {
                        let taken = seen.take()
                        return received.withLock { received in
                            received.formUnion(taken)
                            return received.isSuperset(of: payloads)
                        }
                    }
                }

                // Woken once: the spacing runs from here.
                try await notify(["0"])
                #expect(await spaced.wait(timeout: .seconds(30)))
                let woke = ContinuousClock.now

                // Five more at once: the next wake comes no sooner than the spacing after the
                // last (less the instant between that wake's return and `woke`).
                try await notify(["1", "2", "3", "4", "5"])
                #expect(await spaced.wait(timeout: .seconds(30)))
                let again = ContinuousClock.now
                #expect(again - woke >= spacing - .milliseconds(50), "woken again after \(again - woke)")

                // One wake answered all five, and a quiet spacing (waited out as a timeout, which
                // is not a wake) passes with nothing to wake for.
                #expect(await spaced.wait(timeout: spacing + .milliseconds(100)) == false)
                let quietEnded = ContinuousClock.now

                // After it, a notification wakes at once: well inside the spacing (had the timeout
                // counted as a wake, this one would wait out most of a spacing from it).
                try await notify(["6"])
                let arrived = ContinuousClock.now
                #expect(await spaced.wait(timeout: .seconds(30)))
                let answered = ContinuousClock.now
                #expect(
                    answered - arrived < spacing / 2,
                    "the wake after a quiet spacing waited \(answered - arrived) once the hub had its notification")
                // Had the timeout counted as a wake, no wake could come before a spacing after it,
                // however long the notification took to arrive (when it arrived in time to tell).
                if arrived - quietEnded < spacing - .milliseconds(500) {
                    #expect(
                        answered - quietEnded < spacing - .milliseconds(100), "woken \(answered - quietEnded) after the quiet spacing ended"
                    )
                }
            }
        }
    }
}
