import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import Synchronization
import Testing

@Suite("Deadlines")
struct DeadlineTests {
    struct Refused: Error, Equatable {}

    @Test("an operation on time returns or throws as it did; one that hangs is abandoned with DeadlineExceeded")
    func deadlines() async throws {
        #expect(try await withDeadline(.seconds(5), "quick") { 42 } == 42)
        await #expect(throws: Refused.self) {
            try await withDeadline(.seconds(5), "refusing") { () async throws -> Int in throw Refused() }
        }
        let hang = Hang()
        defer { hang.release() }
        do {
            _ = try await withDeadline(.milliseconds(200), "stuck query") { () async -> Int in
                await hang.forever()
                return 1
            }
            Issue.record("a hung operation returned")
        } catch let error as DeadlineExceeded {
            #expect(error.operation == "stuck query")
        }
        #expect(hang.parked.withLock { $0.count } == 1, "the hung operation is still parked: abandoned, not awaited")
    }
}
