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
        // One database's series names no shard (`{shard=""}`).
        return metrics.split(separator: "\n").first { $0.hasPrefix("ledger_expiry_overdue{shard=\"\"} ") }.flatMap {
            Double($0.split(separator: " ").last!)
        }
    }

    /// A collaboration `client` starts, with no default access.
    static func start(_ client: LedgerClient, _ title: String) async throws -> String {
        try await client.prepareCollaboration(localIdentifier: title, title: title, initiator: Initiator(handle: "\(title)@example.com"))
            .identifier
    }

    /// The collaboration's AccessExpired entries, every page of its history.
    static func expiries(_ client: LedgerClient, _ id: String) async throws -> [History.Entry] {
        var expiries: [History.Entry] = []
        for try await entry in client.allHistory(of: id) where entry.type == "AccessExpired" { expiries.append(entry) }
        return expiries
    }

    /// A session that is not the expiry service on its lease: status names it, not running; a
    /// window ends and stays overdue (status and gauge); let go, the service takes the lease back
    /// and expires it.
    @Test("another session holding the expiry lease: named, windows stay overdue; let go, they expire")
    func squatter() async throws {
        try await LiveServer.run { server in
            let devin = server.client("devin")
            try await waitUntil(timeout: .seconds(120), "the expiry service holding its lease") {
                let expiry = try await devin.logStatus().expiry
                return expiry.running && expiry.holder?.recognised == true && expiry.holder?.since != nil
            }
            try await ExpirySquatter.holding(server.db) { squat in
                try await waitUntil(timeout: .seconds(120), "status names the squatter") {
                    try await devin.logStatus().expiry.holder?.applicationName == "squatter"
                }
                let squatted = try await devin.logStatus().expiry
                #expect(!squatted.running && squatted.holder?.recognised == false && squatted.holder?.since == nil, "\(squatted)")

                let id = try await Self.start(devin, "squatted")
                let person = SimulatedPerson(collaborationId: id, devices: 1)
                _ = try await devin.updateParticipants(added: [person.rootHashData], in: id)
                _ = try await TestWindows.endIn(2, devin, id, [person])
                try await waitUntil(timeout: .seconds(120), "the window overdue on the status") {
                    try await devin.logStatus().expiry.overdue >= 1
                }
                try await waitUntil(timeout: .seconds(120), "the overdue window in ledger_expiry_overdue") {
                    (try await Self.overdueGauge(server) ?? 0) >= 1
                }
                #expect(try await Self.expiries(devin, id).isEmpty, "an expiry was appended while the lease was squatted")
                _ = try await squat.query("SELECT pg_advisory_unlock(\(ExpiryService.leaseKey))", logger: Logger(label: "squatter"))
                try await waitUntil(timeout: .seconds(120), "the expiry, once the service has the lease again") {
                    try await Self.expiries(devin, id).count == 1
                }
            }
            try await waitUntil(timeout: .seconds(120), "the service running again, recognised") {
                let expiry = try await devin.logStatus().expiry
                return expiry.running && expiry.holder?.recognised == true
            }
        }
    }
}
