import Foundation
import LedgerClient
import LedgerDeviceSimulator
import LedgerStore
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// SPEC "Time-bound access": the expiry lease is an advisory lock any database login can take.
/// Status says who holds it and whether that is the expiry service making progress; a session
/// sitting on it is seen (not running, not recognised), the windows it holds back show as
/// overdue on the status and in `ledger_expiry_overdue` (the `LedgerExpiryOverdue` alert), and
/// once it lets go the service takes the lease back and expires them.
@Suite("The expiry lease", .serialized)
struct ExpiryLeaseTests {
    static func overdueGauge(_ server: LiveServer) async throws -> Double? {
        let metrics = String(decoding: try await TestHTTP.data(from: server.baseURL.appendingPathComponent("metrics")).0, as: UTF8.self)
        return metrics.split(separator: "\n").first { $0.hasPrefix("ledger_expiry_overdue ") }.flatMap {
            Double($0.split(separator: " ").last!)
        }
    }

    @Test(
        "a session that is not the expiry service on its lease: status names it, not running; a window ends and stays overdue (status and gauge); let go, the service takes the lease back and expires it"
    )
    func squatter() async throws {
        try await LiveServer.run { server in
            let devin = server.client("devin")
            try await waitUntil(timeout: .seconds(30), "the expiry service holding its lease") {
                let expiry = try await devin.logStatus().expiry
                return expiry.running && expiry.holder?.recognised == true && expiry.holder?.since != nil
            }
            let key = ExpiryService.leaseKey
            let logger = Logger(label: "squatter")
            try await server.db.withConnection { squat in
                try await squat.query("SET application_name = 'squatter'", logger: logger)
                var mine: Int32 = 0
                for try await pid in try await squat.query("SELECT pg_backend_pid()", logger: logger).decode(Int32.self) { mine = pid }
                // The service's session ended, and the lock taken before it asks again (it waits a second).
                // Advisory locks are per database: only this one's (other tests' servers share the cluster).
                var held = false
                let deadline = ContinuousClock.now + .seconds(30)
                while !held, ContinuousClock.now < deadline {
                    _ = try await squat.query(
                        """
                        SELECT pg_terminate_backend(l.pid) FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted
                          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                          AND ((l.classid::int8 << 32) | l.objid::int8) = \(key) AND l.objsubid = 1 AND l.pid <> \(mine)
                        """, logger: logger)
                    for try await locked in try await squat.query("SELECT pg_try_advisory_lock(\(key))", logger: logger).decode(Bool.self) {
                        held = locked
                    }
                }
                try #require(held, "the squatter never got the lock")

                try await waitUntil(timeout: .seconds(30), "status names the squatter") {
                    try await devin.logStatus().expiry.holder?.applicationName == "squatter"
                }
                let squatted = try await devin.logStatus().expiry
                #expect(!squatted.running && squatted.holder?.recognised == false && squatted.holder?.since == nil, "\(squatted)")

                let (id, _) = try await TimeBoundAccessTests.start(devin, "squatted")
                let person = SimulatedPerson(collaborationId: id, devices: 1)
                _ = try await devin.updateParticipants(added: [person.rootHashData], in: id)
                _ = try await TestWindows.endIn(2, devin, id, [person])
                try await waitUntil(timeout: .seconds(30), "the window overdue on the status") {
                    try await devin.logStatus().expiry.overdue >= 1
                }
                try await waitUntil(timeout: .seconds(40), "the overdue window in ledger_expiry_overdue") {
                    (try await Self.overdueGauge(server) ?? 0) >= 1
                }
                #expect(try await TimeBoundAccessTests.expiries(devin, id).isEmpty, "an expiry was appended while the lease was squatted")
                _ = try await squat.query("SELECT pg_advisory_unlock(\(key))", logger: logger)
                try await waitUntil(timeout: .seconds(30), "the expiry, once the service has the lease again") {
                    try await TimeBoundAccessTests.expiries(devin, id).count == 1
                }
            }
            try await waitUntil(timeout: .seconds(30), "the service running again, recognised") {
                let expiry = try await devin.logStatus().expiry
                return expiry.running && expiry.holder?.recognised == true
            }
        }
    }
}
