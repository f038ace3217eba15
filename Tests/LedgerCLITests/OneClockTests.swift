import Foundation
import LedgerClient
import LedgerDeviceSimulator
import LedgerDomain
import LedgerPostgres
import LedgerTestSupport
import PostgresNIO
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// SPEC "One clock": windows, challenges and expiries are decided on the database's clock, in
/// the transaction that records them, whatever the host's says. A real `ledger serve` whose host
/// clock is skewed by an hour (Debian's `faketime`) against its PostgreSQL (and this test's clock).
@Suite("One clock", .serialized)
struct OneClockTests {
    /// `ledger serve` on a test database, its host clock `skew` from the database's; `body` gets
    /// the database (as its owner), an owner's and a member's clients and a new collaboration.
    static func skewed(
        _ skew: String, _ body: @Sendable (PostgresClient, LedgerClient, LedgerClient, String) async throws -> Void
    ) async throws {
        try await withTestStore { _, db, settings in
            let folder = try ExpiryProcessTests.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            // The `faketime` wrapper runs the server as its child: killing the wrapper would leave
            // the server running, so every process started with this folder is ended.
            defer { _ = ProcessRunner.which("pkill").map { ProcessRunner.runBlocking($0, ["-KILL", "-f", folder.path]) } }
            let server = try await ExpiryProcessTests.serve(settings, in: folder, name: "skewed", skew: skew)
            defer {
                kill(server.pid, SIGKILL)
                _ = ProcessRunner.exitStatus(of: server.pid)
            }
            let (owner, member) = (
                try await ExpiryProcessTests.client(server, "owner"), try await ExpiryProcessTests.client(server, "member")
            )
            let id = try await owner.prepareCollaboration(
                localIdentifier: "skewed \(skew)", title: "Skewed", initiator: Initiator(handle: "owner@example.com")
            ).identifier
            do {
                try await body(db, owner, member, id)
            } catch {
                // What the skewed server said last: the evidence when it did not do its part in time.
                let said = ConfigurationTests.lines(server.err).suffix(15).map { "\($0["message"] ?? $0["unparsed"] ?? "") \($0)" }
                Issue.record("ledger serve at \(skew) said, last:\n\(said.joined(separator: "\n"))")
                throw error
            }
        }
    }

    /// A host clock an hour behind: its challenges are usable, a proof after the window's end is
    /// refused, an expiry is appended at its dueAt (not an hour late).
    @Test("a host clock an hour behind: challenges usable, late proofs refused, expiry appended at its dueAt")
    func hostBehind() async throws {
        try await Self.skewed("-1h") { db, owner, member, id in
            let (granted, late) = (SimulatedPerson(collaborationId: id, devices: 1), SimulatedPerson(collaborationId: id, devices: 1))
            _ = try await owner.updateParticipants(added: [granted.rootHashData, late.rootHashData], in: id)
            // Granted: its challenge (an hour old by the host's clock) is not expired.
            guard case .granted = try await verify(member, granted, in: id) else {
                Issue.record("a proof with a fresh challenge was not granted")
                return
            }
            let (due, _) = try await TestWindows.endIn(4, owner, id, [granted, late])
            try await waitUntil(timeout: .seconds(30), "the window's end") { Date() > due.addingTimeInterval(0.5) }
            let refused = await rejection { _ = try await verify(member, late, in: id) }
            #expect(refused?.reason == "access_expired", "\(String(describing: refused))")
            try await waitUntil(timeout: .seconds(60), "the expiry, by the database's clock") {
                try await !ExpiryProcessTests.expiries(db).isEmpty
            }
            let found = try await ExpiryProcessTests.expiries(db)
            #expect(found.allSatisfy { $0.late >= 0 && $0.late < 60 }, "\(found)")
        }
    }

    /// A host clock an hour ahead: a window starting in 30 minutes refuses proofs, one ending in 30
    /// minutes is not expired early (by the service or a command).
    @Test("a host clock an hour ahead: a window not yet open refuses proofs, an open one is not expired early")
    func hostAhead() async throws {
        try await Self.skewed("+1h") { db, owner, member, id in
            let (early, granted) = (SimulatedPerson(collaborationId: id, devices: 1), SimulatedPerson(collaborationId: id, devices: 1))
            let now = Date()
            _ = try await owner.updateParticipants(
                addedWithWindows: [
                    IdentityWindow(
                        rootHash: early.rootHashData, notBefore: now.addingTimeInterval(1800), notAfter: now.addingTimeInterval(7200)),
                    IdentityWindow(rootHash: granted.rootHashData, notAfter: now.addingTimeInterval(1800)),
                ], in: id)
            let notYet = await rejection { _ = try await verify(member, early, in: id) }
            #expect(notYet?.reason == "access_not_yet_valid", "\(String(describing: notYet))")
            guard case .granted = try await verify(member, granted, in: id) else {
                Issue.record("a proof inside the window was not granted")
                return
            }
            // The expiry service looks at least every 10 s: two of its rounds after the window was set.
            try await waitUntil(timeout: .seconds(60), "two rounds of the expiry service") {
                (try await owner.logStatus().expiry.holder?.progressAt).map { $0 > now.addingTimeInterval(11) } ?? false
            }
            try await owner.postHighlight(.change, trigger: "edit", in: id)  // a command catches expiries up first
            #expect(try await ExpiryProcessTests.expiries(db).isEmpty, "a window ending in 30 minutes was expired")
        }
    }
}
