import ArgumentParser
import Crypto
import Foundation
import Histogram
import LedgerApp
import LedgerClient
import LedgerDeviceSimulator
import LedgerPostgres
import LedgerTelemetry
import LedgerTokens
import Logging

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct BenchVerify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "End-to-end proof verification over HTTP at 1 and 16 clients (p50/p99) next to the raw single-core ECDSA verify rate.",
        discussion: """
            A ledger runs in this process (the services of `ledger serve`) on a throwaway embedded \
            PostgreSQL or --database-url. Each client is one recipient with 4 devices on its own \
            collaboration (--shared: all on one). Challenges are fetched and signed before the timed phase (that is device \
            work); the timed phase is the submissions: HTTP, the stored request, the verifier's \
            decision and the verdict appended to the log.
            """)

    @OptionGroup var target: BenchTarget
    @Option(help: "Rounds; medians are reported.") var rounds = 3
    @Option(help: "Proofs each of the 16 clients submits per round (one client submits 4x as many).") var proofs = 60
    @Flag(help: "All clients are recipients of one collaboration (many recipients verifying at once after a share).")
    var shared = false

    func run() async throws {
        let quiet = Logs.quiet()
        print("ledger bench verify: \(rounds) rounds")
        var raw: [Double] = []
        var floors: [Outcome] = []
        var one: [Outcome] = []
        var sixteen: [Outcome] = []
        try await target.run(logger: quiet) { settings in
            (raw, floors, one, sixteen) = try await LocalLedger.run(settings, logger: quiet, maxConnections: 60) {
                ledger in
                var raw: [Double] = []
                var floors: [Outcome] = []
                var one: [Outcome] = []
                var sixteen: [Outcome] = []
                let configuration = URLSessionConfiguration.default
                configuration.httpMaximumConnectionsPerHost = 64
                let session = URLSession(configuration: configuration)
                let authority = ledger.authority
                func client(_ account: String) -> LedgerClient {
                    LedgerClient(baseURL: ledger.baseURL, session: session) { try await authority.issue(account: account) }
                }
                // The timed submissions: the same SDK calls over a NIO connection per client, a token each.
                let baseURL = ledger.baseURL
                @Sendable func timedClient(_ account: String) async throws -> (LedgerClient, NIOTransport) {
                    let token = try await authority.issue(account: account)
                    let transport = try await NIOTransport.connect(host: baseURL.host ?? "127.0.0.1", port: baseURL.port ?? 80)
                    return (LedgerClient(baseURL: baseURL, transport: transport) { token }, transport)
                }
                for round in 1...rounds {
                    raw.append(Self.rawVerifyRate(seconds: 1.5))
                    floors.append(try await Self.httpFloor(clients: 16, requestsEach: proofs * 16, baseURL: baseURL))
                    one.append(
                        try await Self.measure(
                            clients: 1, proofsEach: proofs * 4, round: round, shared: shared, client: client, timedClient: timedClient))
                    sixteen.append(
                        try await Self.measure(
                            clients: 16, proofsEach: proofs, round: round, shared: shared, client: client, timedClient: timedClient))
                    print(
                        String(
                            format:
                                "  round %d: raw %.0f/s, HTTP floor %.0f/s (CPU %@), 1 client %.0f/s (p50 %.1f ms, p99 %.1f ms, CPU %@), 16 clients %.0f/s (p50 %.1f ms, p99 %.1f ms, CPU %@)",
                            round, raw.last!, floors.last!.rate, floors.last!.cpuText, one.last!.rate, one.last!.p50, one.last!.p99,
                            one.last!.cpuText, sixteen.last!.rate, sixteen.last!.p50, sixteen.last!.p99, sixteen.last!.cpuText))
                }
                return (raw, floors, one, sixteen)
            }
        }
        let rawMedian = Stats.median(raw)
        print("")
        print("medians of \(rounds) rounds")
        print(String(format: "  raw ECDSA P-256 verify, one core          %8.0f verifies/s", rawMedian))
        let floorRate = Stats.median(floors.map(\.rate))
        print(
            String(
                format: "  HTTP floor: GET /health, 16 clients       %8.0f requests/s p50 %6.1f ms   p99 %6.1f ms   ratio to raw %.2f",
                floorRate, Stats.median(floors.map(\.p50)), Stats.median(floors.map(\.p99)), floorRate / rawMedian))
        for (name, outcomes) in [("1 client ", one), ("16 clients", sixteen)] {
            let rate = Stats.median(outcomes.map(\.rate))
            print(
                String(
                    format: "  end to end over HTTP, %@  %8.0f proofs/s   p50 %6.1f ms   p99 %6.1f ms   ratio to raw %.2f",
                    name, rate, Stats.median(outcomes.map(\.p50)), Stats.median(outcomes.map(\.p99)), rate / rawMedian))
        }
        // What the cores allow: each phase's CPU per call, and what the target leaves per proof.
        print("")
        print(
            "CPU per call, medians (machine: all processes on its \(CPUTime.cores) cores, PostgreSQL's included; process: this one, server and clients)"
        )
        for (name, outcomes) in [("HTTP floor ", floors), ("1 client   ", one), ("16 clients ", sixteen)] {
            let machine = outcomes.compactMap(\.cpu.machine)
            print(
                String(
                    format: "  %@ machine %@   process %5.3f ms", name,
                    machine.isEmpty ? "    ?   " : String(format: "%5.3f ms", Stats.median(machine)),
                    Stats.median(outcomes.map(\.cpu.process))))
        }
        print(
            String(
                format:
                    "  the target, 0.5x raw at 16 clients (%.0f proofs/s), leaves %.3f ms of CPU per proof on %d cores; raw ECDSA takes %.3f of it",
                rawMedian / 2, Double(CPUTime.cores) * 1000 / (rawMedian / 2), CPUTime.cores, 1000 / rawMedian))
    }

    struct Outcome: Sendable {
        var calls = 0
        var rate: Double
        var p50: Double
        var p99: Double
        /// CPU per call while the phase ran.
        var cpu: CPUTime.PerOperation

        var cpuText: String {
            (cpu.machine.map { String(format: "%.2f ms a call", $0) } ?? "?") + String(format: ", this process %.2f", cpu.process)
        }
    }

    /// Verifies per second of one valid signature on one core, as the verifier checks them.
    static func rawVerifyRate(seconds: Double) -> Double {
        let key = P256.Signing.PrivateKey()
        let message = Data((0..<32).map { UInt8($0) })
        let signature = try! key.signature(for: message)
        let publicKey = key.publicKey
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + .milliseconds(Int(seconds * 1000))
        var count = 0
        while clock.now < deadline {
            for _ in 0..<50 where publicKey.isValidSignature(signature, for: message) { count += 1 }
        }
        return Double(count) / (clock.now - start).seconds
    }

    /// The same 16 connections asking for `GET /health` (no token, no database): what HTTP
    /// alone costs on this machine, client and server sharing its cores. No endpoint answers
    /// faster; a proof's submission is one such exchange plus its decision.
    static func httpFloor(clients: Int, requestsEach: Int, baseURL: URL) async throws -> Outcome {
        var transports: [NIOTransport] = []
        for _ in 0..<clients {
            transports.append(try await NIOTransport.connect(host: baseURL.host ?? "127.0.0.1", port: baseURL.port ?? 80))
        }
        let (request, connections) = (URLRequest(url: baseURL.appendingPathComponent("health")), transports)
        let outcome = try await timed(calls: Array(repeating: requestsEach, count: clients)) { worker, _ in
            let (_, status) = try await connections[worker].send(request)
            guard status == 200 else { throw ValidationError("GET /health answered \(status)") }
        }
        for transport in transports { await transport.close() }
        return outcome
    }

    struct Prepared: Sendable {
        var client: LedgerClient
        var proofs: [(SignedProof, Challenge)]
    }

    static func measure(
        clients: Int, proofsEach: Int, round: Int, shared: Bool, client: (String) -> LedgerClient,
        timedClient: (String) async throws -> (LedgerClient, NIOTransport)
    ) async throws -> Outcome {
        // Set-up, untimed: a collaboration per recipient (or one for all), identities added, challenges signed.
        var prepared: [Prepared] = []
        var transports: [NIOTransport] = []
        let owner = client("owner")
        func start(_ name: String) async throws -> String {
            try await owner.prepareCollaboration(
                localIdentifier: "bench-\(round)-\(clients)-\(name)", title: "Bench", initiator: Initiator(handle: "owner@example.com")
            )
            .identifier
        }
        let sharedId = shared ? try await start("shared") : nil
        var people: [(String, SimulatedPerson)] = []
        for c in 0..<clients {
            let id: String
            if let sharedId { id = sharedId } else { id = try await start("\(c)") }
            people.append((id, SimulatedPerson(collaborationId: id, devices: 4)))
        }
        for (id, members) in Dictionary(grouping: people, by: \.0) {
            try await owner.updateParticipants(added: members.map(\.1.rootHashData), in: id)
        }
        for (c, (id, person)) in people.enumerated() {
            let account = "recipient-\(round)-\(clients)-\(c)"
            let recipient = client(account)
            var proofs: [(SignedProof, Challenge)] = []
            for n in 0..<proofsEach {
                let challenge = try await recipient.challenge(for: id)
                proofs.append((person.signedProof(challenge: challenge.data, device: n % 4, der: n % 2 == 0), challenge))
            }
            let (timed, transport) = try await timedClient(account)
            prepared.append(Prepared(client: timed, proofs: proofs))
            transports.append(transport)
        }
        // Timed: every client submits its proofs one after the other.
        let submitters = prepared
        let outcome = try await timed(calls: prepared.map(\.proofs.count)) { worker, n in
            let (proof, challenge) = submitters[worker].proofs[n]
            let result = try await submitters[worker].client.submitProof(
                publicKey: proof.publicKey, publicKeyIndex: proof.publicKeyIndex, inclusionHashes: proof.inclusionHashes,
                signature: proof.signature, challenge: challenge)
            guard case .granted = result else { throw ValidationError("a bench proof was not granted: \(result)") }
        }
        for transport in transports { await transport.close() }
        return outcome
    }

    /// Worker `w` makes `calls[w]` calls one after the other (`call(w, n)`), all workers at
    /// once: the calls' rate and their latency.
    /// `calls[w]` calls of worker `w` (or fewer, if `until` passes first), timed one by one.
    static func timed(
        calls: [Int], until deadline: ContinuousClock.Instant? = nil, _ call: @escaping @Sendable (Int, Int) async throws -> Void
    ) async throws -> Outcome {
        let clock = ContinuousClock()
        let cpu = CPUTime.now()
        let start = clock.now
        let histogram = try await withThrowingTaskGroup(of: Histogram<UInt64>.self) { group in
            for (worker, count) in calls.enumerated() {
                group.addTask {
                    var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000)
                    for n in 0..<count {
                        if let deadline, clock.now >= deadline { break }
                        let sent = clock.now
                        try await call(worker, n)
                        _ = histogram.record(UInt64((clock.now - sent).seconds * 1_000_000))
                    }
                    return histogram
                }
            }
            var all = Histogram<UInt64>(highestTrackableValue: 60_000_000)
            for try await h in group { all.add(h) }
            return all
        }
        let elapsed = (clock.now - start).seconds
        return Outcome(
            calls: Int(histogram.totalCount), rate: Double(histogram.totalCount) / elapsed,
            p50: Double(histogram.valueAtPercentile(50)) / 1000,
            p99: Double(histogram.valueAtPercentile(99)) / 1000, cpu: CPUTime.since(cpu, operations: Int(histogram.totalCount)))
    }
}
