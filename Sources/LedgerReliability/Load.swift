import Foundation
import LedgerClient
import LedgerDeviceSimulator
import LedgerTokens
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the load generator was told: every acknowledged write with the position the ledger
/// answered, proofs left pending (202), and what failed while the faults were on.
final class Tally: Sendable {
    struct Ack: Sendable {
        enum Kind: String, Sendable { case start, participants, grant, highlight }
        let kind: Kind
        let collaborationId: String
        let position: Int64
    }

    struct Pending: Sendable {
        let collaborationId: String
        let requestId: String
        let account: String
    }

    struct Counts: Sendable {
        var attempts = 0
        /// Writes not acknowledged: transport errors and 5xx while a fault was on.
        var unacknowledged = 0
        var rejectedAsExpected = 0
        /// A valid proof refused, or a 4xx other than the expected ones.
        var unexpectedRefusals: [String] = []
        /// A tampered proof granted: must never happen.
        var tamperedGranted = 0
    }

    let acks = Mutex<[Ack]>([])
    let pending = Mutex<[Pending]>([])
    let counts = Mutex(Counts())

    func ack(_ kind: Ack.Kind, _ collaborationId: String, _ position: Int64) {
        acks.withLock { $0.append(Ack(kind: kind, collaborationId: collaborationId, position: position)) }
    }
}

/// Writers that play the life cycle over HTTP through the SDK, as apps do: start a
/// collaboration, add three identities, each recipient proves on its device (one in two
/// rounds with a signature over other data, which must be refused), a highlight, a removal.
/// Writer n plays its life cycles against `baseURLs[n % count]`.
struct LoadGenerator: Sendable {
    let baseURLs: [URL]
    let authority: TokenAuthority
    let tally: Tally
    let session: URLSession

    init(baseURLs: [URL], authority: TokenAuthority, tally: Tally) {
        self.baseURLs = baseURLs
        self.authority = authority
        self.tally = tally
        let configuration = URLSessionConfiguration.ephemeral
        // A request the API cannot finish (database down) fails instead of waiting a minute.
        configuration.timeoutIntervalForRequest = 20
        configuration.httpMaximumConnectionsPerHost = 64
        session = URLSession(configuration: configuration)
    }

    func client(_ account: String, via baseURL: URL? = nil) -> LedgerClient {
        let authority = authority
        return LedgerClient(baseURL: baseURL ?? baseURLs[0], session: session) { try await authority.issue(account: account) }
    }

    func run(writers: Int, until deadline: ContinuousClock.Instant) async {
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var round = 0
                    while ContinuousClock.now < deadline {
                        round += 1
                        do {
                            try await lifeCycle(writer: writer, round: round)
                        } catch let error as LedgerError where (400..<500).contains(error.status) {
                            tally.counts.withLock { $0.unexpectedRefusals.append("\(error.status) \(error.code): \(error.message)") }
                        } catch {
                            tally.counts.withLock { $0.unacknowledged += 1 }
                            try? await Task.sleep(for: .milliseconds(100))
                        }
                    }
                }
            }
        }
    }

    func lifeCycle(writer: Int, round: Int) async throws {
        let via = baseURLs[writer % baseURLs.count]
        let owner = client("owner-\(writer)", via: via)
        tally.counts.withLock { $0.attempts += 1 }
        let started = try await owner.prepareCollaboration(
            localIdentifier: "reliability-\(writer)-\(round)", title: "Round \(round)",
            initiator: .init(handle: "owner-\(writer)@example.com"))
        let id = started.identifier
        tally.ack(.start, id, started.position)

        let people = (0..<3).map { _ in SimulatedPerson(collaborationId: id, devices: 1) }
        tally.counts.withLock { $0.attempts += 1 }
        let added = try await owner.updateParticipants(added: people.map(\.rootHashData), in: id)
        tally.ack(.participants, id, added.position)

        for (index, person) in people.enumerated() {
            let account = "member-\(writer)-\(round)-\(index)"
            let member = client(account, via: via)
            let tampered = index == 2 && round % 2 == 0
            tally.counts.withLock { $0.attempts += 1 }
            let challenge = try await member.challenge(for: id)
            var proof = person.signedProof(challenge: challenge.data, device: 0)
            if tampered { proof.signature = person.signedProof(challenge: Data("other data".utf8), device: 0).signature }
            do {
                let result = try await member.submitProof(
                    publicKey: proof.publicKey, publicKeyIndex: proof.publicKeyIndex, inclusionHashes: proof.inclusionHashes,
                    signature: proof.signature, challenge: challenge)
                switch result {
                case .granted(_, _, let position):
                    if tampered { tally.counts.withLock { $0.tamperedGranted += 1 } }
                    tally.ack(.grant, id, position)
                case .pending(let requestID, _):
                    tally.pending.withLock { $0.append(.init(collaborationId: id, requestId: requestID, account: account)) }
                }
            } catch let error as LedgerError where error.status == 403 && error.code == "proof_rejected" {
                if tampered {
                    tally.counts.withLock { $0.rejectedAsExpected += 1 }
                } else {
                    tally.counts.withLock { $0.unexpectedRefusals.append("valid proof refused: \(error.reason ?? error.message)") }
                }
            }
        }

        tally.counts.withLock { $0.attempts += 1 }
        tally.ack(.highlight, id, try await owner.postHighlight(.change, trigger: "edit", in: id))
        tally.counts.withLock { $0.attempts += 1 }
        let removed = try await owner.updateParticipants(removed: [people[0].rootHashData], in: id)
        tally.ack(.participants, id, removed.position)
    }
}
