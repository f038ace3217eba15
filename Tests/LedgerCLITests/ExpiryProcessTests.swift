import Foundation
import LedgerClient
import LedgerDeviceSimulator
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import LedgerTokens
import PostgresNIO
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// SPEC "Time-bound access", exactly once: real `ledger serve` processes on one database, one
/// killed with SIGKILL while an expiry is due, two running side by side with one of them killed
/// between two waves of expiries. Each window's `AccessExpired` is in the log once, with its true
/// `dueAt`.
@Suite("Expiry across processes")
struct ExpiryProcessTests {
    struct Server {
        let pid: pid_t
        let url: URL
        let err: String
    }

    /// `ledger serve` on the test database (`folder` holds its keys, shared by every instance),
    /// once it answers /ready; `skew` (`+1h`, `-1h`): its host clock that far from the
    /// database's, under Debian's `faketime`; `settings`: more of its environment.
    static func serve(
        _ database: DatabaseSettings, in folder: URL, name: String, skew: String? = nil, settings: [String: String] = [:]
    ) async throws -> Server {
        let err = folder.appendingPathComponent("\(name).err").path
        let environment = ConfigurationTests.environment(
            [
                "LEDGER_LOG_FORMAT": "json", "LEDGER_JWT_SECRET": ConfigurationTests.secret,
                "LEDGER_DATABASE_URL": database.url(revealPassword: true),
                // faketime moves the wall clock only: a monotonic clock an hour back could be negative on a fresh machine.
                "FAKETIME_DONT_FAKE_MONOTONIC": "1",
            ].merging(settings) { $1 })
        let arguments = ["serve", "--data-dir", folder.appendingPathComponent("data").path, "--port", "0"]
        let pid = try ProcessRunner.launch(
            skew == nil ? ledgerBinary() : try #require(ProcessRunner.which("faketime"), "faketime (Debian's)"),
            skew.map { ["-f", $0, ledgerBinary()] + arguments } ?? arguments, environment: environment,
            outputPath: folder.appendingPathComponent("\(name).out").path, errorPath: err)
        try await waitUntil(timeout: .seconds(120), "\(name) logs where it listens") {
            ConfigurationTests.listening(err) != nil || ProcessRunner.exitStatus(of: pid) != nil
        }
        let url = try #require(ConfigurationTests.listening(err), "\(name) stopped: \(ConfigurationTests.lines(err).suffix(5))")
        try await waitUntil(timeout: .seconds(60), "\(name) ready") { await ConfigurationTests.status(url, "ready") == 200 }
        return Server(pid: pid, url: url, err: err)
    }

    static func client(_ server: Server, _ account: String, roles: [String] = []) async throws -> LedgerClient {
        let authority = try await TokenAuthority(secret: ConfigurationTests.secret)
        return LedgerClient(baseURL: server.url, transport: HTTPClientTransport()) {
            try await authority.issue(account: account, roles: roles)
        }
    }

    /// Every AccessExpired in the log: (collaboration stream, root hash, dueAt, seconds from dueAt to its commit).
    static func expiries(_ db: PostgresClient) async throws -> [(stream: String, rootHash: String, dueAt: String, late: Double)] {
        try await db.queryUnlessClosed(
            """
            SELECT stream_id, data->>'rootHash', data->>'dueAt',
                   extract(epoch FROM recorded_at - (data->>'dueAt')::timestamptz)::float8
            FROM ledger_events WHERE event_type = 'AccessExpired' ORDER BY position
            """, logger: .init(label: "expiry-test")
        ) { rows in
            var found: [(String, String, String, Double)] = []
            for try await row in rows.decode((String, String, String, Double).self) { found.append(row) }
            return found
        }
    }

    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-expiry-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A collaboration of `owner` with `count` identities, the first `granted` of them proved,
    /// whose windows are then set to end `seconds` from then (a grant on a loaded machine may
    /// take a while); the collaboration and that end.
    static func windows(
        _ owner: LedgerClient, _ member: LedgerClient, count: Int, granted: Int, endIn seconds: Double
    ) async throws -> (id: String, due: Date) {
        let id = try await owner.prepareCollaboration(
            localIdentifier: "doc-\(UUID())", title: "Until then", initiator: Initiator(handle: "owner@example.com")
        ).identifier
        let people = (0..<count).map { _ in SimulatedPerson(collaborationId: id, devices: 1) }
        _ = try await owner.updateParticipants(
            addedWithWindows: people.map { IdentityWindow(rootHash: $0.rootHashData, notAfter: Date().addingTimeInterval(600)) }, in: id)
        for person in people.prefix(granted) {
            let result = try await verify(member, person, in: id)
            guard case .granted = result else {
                Issue.record("a proof inside the window: \(result)")
                break
            }
        }
        return (id, try await TestWindows.endIn(seconds, owner, id, people).due)
    }

    @Test("the server SIGKILLed while an expiry is due: after a restart it is appended once, at its true dueAt")
    func killed() async throws {
        try await withTestStore { _, db, settings in
            let folder = try Self.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let first = try await Self.serve(settings, in: folder, name: "first")
            var live = [first.pid]
            defer {
                for pid in live {
                    kill(pid, SIGKILL)
                    _ = ProcessRunner.exitStatus(of: pid)
                }
            }
            let (owner, member) = (try await Self.client(first, "owner"), try await Self.client(first, "member"))
            let (id, due) = try await Self.windows(owner, member, count: 1, granted: 1, endIn: 8)
            kill(first.pid, SIGKILL)
            _ = await ProcessRunner.exit(of: first.pid)
            live = []
            try await waitUntil(timeout: .seconds(15), "the window's end, 1.5 s past, with no server running") {
                Date() > due.addingTimeInterval(1.5)
            }
            #expect(try await Self.expiries(db).isEmpty)

            let second = try await Self.serve(settings, in: folder, name: "second")
            live = [second.pid]
            try await waitUntil(timeout: .seconds(30), "the overdue expiry") { try await !Self.expiries(db).isEmpty }
            let found = try await Self.expiries(db)
            #expect(found.count == 1 && found[0].stream == "collaboration-\(id)")
            #expect(abs(try #require(RecordedTime.micros(found[0].dueAt)) - Int64((due.timeIntervalSince1970 * 1e6).rounded())) <= 1)
            #expect(found[0].late > 1.5, "appended \(found[0].late) s after dueAt: after the restart, not before")

            // A third start, and a window falling due under it: still one expiry for the first.
            kill(second.pid, SIGKILL)
            _ = await ProcessRunner.exit(of: second.pid)
            let third = try await Self.serve(settings, in: folder, name: "third")
            live = [third.pid]
            let (later, _) = try await Self.windows(
                try await Self.client(third, "owner"), try await Self.client(third, "member"), count: 1, granted: 0, endIn: 1)
            try await waitUntil(timeout: .seconds(15), "the third server's expiry") {
                try await Self.expiries(db).contains { $0.stream == "collaboration-\(later)" }
            }
            #expect(try await Self.expiries(db).filter { $0.stream == "collaboration-\(id)" }.count == 1)
        }
    }

    @Test("two servers on one database: each expiry once, also when the lease holder is killed between waves")
    func twoServers() async throws {
        try await withTestStore { _, db, settings in
            let folder = try Self.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let a = try await Self.serve(settings, in: folder, name: "a")
            let b = try await Self.serve(settings, in: folder, name: "b")
            var live = [a.pid, b.pid]
            defer {
                for pid in live {
                    kill(pid, SIGKILL)
                    _ = ProcessRunner.exitStatus(of: pid)
                }
            }
            let (ownerA, memberA) = (try await Self.client(a, "owner"), try await Self.client(a, "member"))
            let (ownerB, memberB) = (try await Self.client(b, "owner"), try await Self.client(b, "member"))
            let firstWave = [
                try await Self.windows(ownerA, memberA, count: 10, granted: 2, endIn: 2).id,
                try await Self.windows(ownerB, memberB, count: 10, granted: 2, endIn: 2).id,
            ]
            try await waitUntil(timeout: .seconds(20), "the first wave") { try await Self.expiries(db).count >= 20 }
            // The second wave falls due after A is gone.
            let secondWave = [
                try await Self.windows(ownerA, memberB, count: 10, granted: 1, endIn: 6).id,
                try await Self.windows(ownerB, memberA, count: 10, granted: 1, endIn: 6).id,
            ]
            let waves = firstWave + secondWave
            // Whichever of them holds the expiry service's lease (`ledger serve <pid>`) is killed.
            let lease = AdvisoryLease(key: ExpiryService.leaseKey, client: db, logger: .init(label: "expiry-test"))
            let holder = try #require(try await lease.holder()?.split(separator: " ").last.flatMap { pid_t($0) })
            #expect([a.pid, b.pid].contains(holder), "the lease is held by \(holder), not by a or b")
            let survivor = holder == a.pid ? b : a
            kill(holder, SIGKILL)
            _ = await ProcessRunner.exit(of: holder)
            live = [survivor.pid]
            try await waitUntil(timeout: .seconds(30), "the second wave") { try await Self.expiries(db).count >= 40 }
            let found = try await Self.expiries(db)
            #expect(found.count == 40)
            #expect(Set(found.map { "\($0.stream) \($0.rootHash)" }).count == 40, "an identity expired twice")
            #expect(Set(found.map(\.stream)) == Set(waves.map { "collaboration-\($0)" }))
            #expect(found.allSatisfy { $0.late >= 0 }, "an expiry before its dueAt")
            // Every expiry appended moved its stream's next end: nothing is overdue.
            let status = try await Self.client(survivor, "owner")
            try await waitUntil(timeout: .seconds(10), "no window overdue") { try await status.logStatus().expiry.overdue == 0 }
            #expect(try await status.logStatus().expiry.running)
            #expect(try await lease.holder() == "ledger serve \(survivor.pid)")
        }
    }
}
