import ArgumentParser
import Foundation
import LedgerClient
import LedgerDeviceSimulator

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The load generator of `ledger-bench commands`, in a process of its own so that the
/// server's CPU is the server's: its clients, their JSON and their signatures cost this
/// process, not the one measured.
///
/// Contract with the caller (`LoadProcess`): it reads `FOLDER/plan.json`, sets its clients up
/// (untimed), writes `FOLDER/ready`, waits for `FOLDER/go`, runs the timed phase, and writes
/// `FOLDER/result.json`.
struct BenchLoad: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "The load generator `ledger-bench commands` starts for each phase (not for use on its own).")

    @Argument(help: "The folder holding plan.json; ready, go and result.json are exchanged there.") var folder: String

    func run() async throws {
        let folder = URL(fileURLWithPath: folder)
        let plan = try JSONDecoder().decode(LoadPlan.self, from: Data(contentsOf: folder.appendingPathComponent("plan.json")))
        let servers = try plan.servers.map { text in
            guard let url = URL(string: text), url.port != nil else { throw ValidationError("bad base URL in the plan: \(text)") }
            return url
        }
        guard !servers.isEmpty else { throw ValidationError("the plan names no server") }
        // Clients are spread over the servers round-robin: client c talks to server c mod count.
        var clients: [LedgerClient] = []
        var transports: [NIOTransport] = []
        var baseURLs: [URL] = []
        for (c, token) in plan.tokens.enumerated() {
            let baseURL = servers[c % servers.count]
            let transport = try await NIOTransport.connect(host: baseURL.host ?? "127.0.0.1", port: baseURL.port!)
            clients.append(LedgerClient(baseURL: baseURL, transport: transport) { token })
            transports.append(transport)
            baseURLs.append(baseURL)
        }
        let call = try await Self.prepare(plan, clients: clients, baseURLs: baseURLs, transports: transports)
        _ = FileManager.default.createFile(atPath: folder.appendingPathComponent("ready").path, contents: nil)
        let go = folder.appendingPathComponent("go").path
        try await LoadProcess.poll("the go signal", within: .seconds(60), every: .milliseconds(1)) {
            FileManager.default.fileExists(atPath: go)
        }
        let outcome = try await BenchVerify.timed(
            calls: Array(repeating: Int.max, count: clients.count), until: ContinuousClock.now + .milliseconds(Int(plan.seconds * 1000)),
            call)
        for transport in transports { await transport.close() }
        let result = LoadResult(
            calls: outcome.calls, rate: outcome.rate, p50: outcome.p50, p99: outcome.p99, cpuPerCall: outcome.cpu.process)
        try JSONEncoder().encode(result).write(to: folder.appendingPathComponent("result.json"))
    }

    /// Sets the phase's clients up (their collaborations, identities) and returns the timed call.
    /// Client c talks to `baseURLs[c]` over `transports[c]`.
    static func prepare(
        _ plan: LoadPlan, clients: [LedgerClient], baseURLs: [URL], transports: [NIOTransport]
    ) async throws -> @Sendable (Int, Int) async throws -> Void {
        switch plan.phase {
        case .health:
            let requests = baseURLs.map { URLRequest(url: $0.appendingPathComponent("health")) }
            return { c, _ in
                let (_, status) = try await transports[c].send(requests[c])
                guard status == 200 else { throw ValidationError("GET /health answered \(status)") }
            }
        case .exchange:
            // A start refused before any database work (an empty localIdentifier, 400): the token
            // checked, the body read, a JSON answer. A command's exchange, without its command.
            let requests = zip(plan.tokens, baseURLs).map { token, baseURL in
                var request = URLRequest(url: baseURL.appendingPathComponent("v1/collaborations"))
                request.httpMethod = "POST"
                request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                request.httpBody = Data(#"{"localIdentifier":"","title":"Bench plan","initiatorHandle":"bench@example.com"}"#.utf8)
                return request
            }
            return { c, _ in
                let (_, status) = try await transports[c].send(requests[c])
                guard status == 400 else { throw ValidationError("the refused start answered \(status)") }
            }
        case .starts:
            return { c, n in
                _ = try await clients[c].prepareCollaboration(
                    localIdentifier: "doc-\(n)", title: "Bench plan \(c)-\(n)",
                    initiator: Initiator(handle: "bench-\(c)@example.com", name: "Bench \(c)"))
            }
        case .highlights:
            let owned = try await startEach(clients)
            return { c, _ in _ = try await clients[c].postHighlight(.change, trigger: "edit", in: owned[c]) }
        case .readback:
            let owned = try await startEach(clients)
            return { c, _ in
                let position = try await clients[c].postHighlight(.change, trigger: "edit", in: owned[c])
                _ = try await clients[c].highlights(in: owned[c], minPosition: position, limit: 1)
            }
        case .adds:
            let owned = try await startEach(clients)
            return { c, _ in
                let identities = (0..<3).map { _ in Data((0..<32).map { _ in UInt8.random(in: 0...255) }) }
                _ = try await clients[c].updateParticipants(added: identities, in: owned[c])
            }
        case .proofs:
            // Each client is a recipient with 4 devices on a collaboration of its own, started
            // and shared by one owner. Timed: a challenge, the device's signature, the proof.
            guard let ownerToken = plan.ownerToken else { throw ValidationError("a proofs plan needs an owner token") }
            let owner = LedgerClient(baseURL: baseURLs[0], session: .shared, token: ownerToken)
            var people: [(String, SimulatedPerson)] = []
            for c in clients.indices {
                let id = try await owner.prepareCollaboration(
                    localIdentifier: "proofs-\(c)", title: "Bench", initiator: Initiator(handle: "owner@example.com")
                ).identifier
                let person = SimulatedPerson(collaborationId: id, devices: 4)
                _ = try await owner.updateParticipants(added: [person.rootHashData], in: id)
                people.append((id, person))
            }
            let recipients = people
            return { c, n in
                let (id, person) = recipients[c]
                let challenge = try await clients[c].challenge(for: id)
                let proof = person.signedProof(challenge: challenge.data, device: n % 4, der: n % 2 == 0)
                let result = try await clients[c].submitProof(
                    publicKey: proof.publicKey, publicKeyIndex: proof.publicKeyIndex, inclusionHashes: proof.inclusionHashes,
                    signature: proof.signature, challenge: challenge)
                guard case .granted = result else { throw ValidationError("a bench proof was not granted: \(result)") }
            }
        }
    }

    /// One collaboration for each client, started by it (untimed).
    static func startEach(_ clients: [LedgerClient]) async throws -> [String] {
        var owned: [String] = []
        for client in clients {
            owned.append(
                try await client.prepareCollaboration(
                    localIdentifier: "noticed", title: "Noticed", initiator: Initiator(handle: "bench@example.com")
                )
                .identifier)
        }
        return owned
    }
}

/// What one load process is asked to do: a phase's calls from one client per token, for
/// `seconds`. Each token is its own account.
struct LoadPlan: Codable, Sendable {
    /// `readback`: a highlight, then a read of the highlights that waits for it (`minPosition`):
    /// read-your-writes, which the projector's steps (`LEDGER_FOLLOW_INTERVAL`) pace.
    enum Phase: String, Codable, Sendable, CaseIterable { case health, exchange, starts, highlights, readback, adds, proofs }

    var baseURL: String
    var phase: Phase
    var seconds: Double
    var tokens: [String]
    /// The owner of the recipients' collaborations (proofs only).
    var ownerToken: String?
    /// Several servers of one ledger (`ledger-bench shards --budget`): client c talks to
    /// `baseURLs[c % count]`; nil, `baseURL` alone.
    var baseURLs: [String]? = nil

    /// The servers the clients are spread over, in order.
    var servers: [String] { baseURLs ?? [baseURL] }
}

/// What the load process measured: the calls made, their rate and latency, and its own CPU per call.
struct LoadResult: Codable, Sendable {
    var calls: Int
    var rate: Double
    var p50: Double
    var p99: Double
    var cpuPerCall: Double
}
