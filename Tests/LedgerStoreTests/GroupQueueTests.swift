import LedgerStore
import Synchronization
import Testing

@Suite("Group queue")
struct GroupQueueTests {
    /// What the groups saw: every item once, group weights, groups in flight at once.
    final class Record: Sendable {
        struct Seen {
            var items: [Int] = []
            var largestGroup = 0
            var inFlight = 0
            var mostInFlight = 0
        }
        let seen = Mutex(Seen())
    }

    @Test("many callers at once: own outputs in order, each item once, groups within weight and flight limits")
    func groups() async throws {
        for inFlight in [1, 2] {
            let queue = GroupQueue<Int, Int>(maxInFlight: inFlight, maxWeight: 10) { $0 % 3 + 1 }
            let record = Record()
            let process: @Sendable ([Int]) async -> [Int] = { group in
                record.seen.withLock { seen in
                    seen.items += group
                    seen.largestGroup = max(seen.largestGroup, group.map { $0 % 3 + 1 }.reduce(0, +))
                    seen.inFlight += 1
                    seen.mostInFlight = max(seen.mostInFlight, seen.inFlight)
                }
                await Task.yield()
                record.seen.withLock { $0.inFlight -= 1 }
                return group.map { $0 * 2 }
            }
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                for caller in 0..<40 {
                    tasks.addTask {
                        for round in 0..<5 {
                            // Callers submit one to three items at a time.
                            let items = (0..<(caller % 3 + 1)).map { caller * 1000 + round * 10 + $0 }
                            let outputs = await queue.submit(items, process: process)
                            #expect(outputs == items.map { $0 * 2 })
                        }
                    }
                }
                try await tasks.waitForAll()
            }
            let seen = record.seen.withLock { $0 }
            let expected = (0..<40).flatMap { caller in
                (0..<5).flatMap { round in (0..<(caller % 3 + 1)).map { caller * 1000 + round * 10 + $0 } }
            }
            #expect(seen.items.sorted() == expected.sorted(), "every item processed exactly once")
            #expect(seen.largestGroup <= 10)
            #expect(seen.mostInFlight <= inFlight)
        }
    }
}
