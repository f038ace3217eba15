import Foundation
import HTTPTypes
import LedgerConfiguration
import LedgerDeviceSimulator
import LedgerDomain
import LedgerIndex
import LedgerStore
import LedgerTestSupport
import LedgerWire
import Logging
import Testing
import TransparencyLog

/// Lookups over random logs from the simulator (issue 67, "Must show"): collaborations with
/// starts, adds, grants, removals, windows, revocations, expiries and refused proofs, interleaved
/// in the log, and an erasure through the API. Every collaboration's lookup, through the real
/// router, verifies offline and lists exactly a scan of the log; the members folded from it
/// (`VerifiedMembers`) equal the projection's served members at each of its positions.
@Suite("Lookups over simulated logs")
struct SimulatedLookupTests {
    @Test("every lookup equals a scan, and verified members equal the projection's at each position", arguments: [5 as UInt64, 6])
    func simulated(seed: UInt64) async throws {
        try await LiveServer.run(configuration: LookupAPITests.configuration, signer: try NoteSigner(name: "simulated.test/ledger")) {
            api in
            // One collaboration through the API, its grant's account erased: its lookup still lists every event.
            let (granted, _, key, _) = try await LogAPITests.grantedLog(api)
            let erased = try await api.call(
                .post, "/v1/privacy/erasures", as: "officer", roles: ["privacy"], json: #"{"account":"alice","reason":"T-1"}"#)
            #expect(erased.status == .ok, "\(erased.raw)")
            let ids = try await Self.append(seed: seed, collaborations: 10, to: EventStore(client: api.db, logger: Logger(label: "test")))
            var seen: Set<String> = []
            for id in [granted] + ids {
                let scanned = try await LookupAPITests.scan(api, .collaboration(id), through: .max)
                let lookup = try await LookupAPITests.lookup(api, "collaboration=\(id)", through: scanned.last!, key: key)
                let report = try LookupVerifier.verify(lookup, key: key, asked: .collaboration(id), through: scanned.last!)
                #expect(report.positions == scanned, "\(id)")
                for position in scanned {
                    let (_, state) = try VerifiedMembers.fold(lookup, key: key, collaboration: id, at: position)
                    var folded: [String: String] = [:]
                    for (hash, identity) in state?.identities ?? [:] where identity.status != .removed {
                        folded[hash] = identity.status.rawValue
                    }
                    let served = try await api.call(
                        .get, "/v1/collaborations/\(id)/members?atPosition=\(position)&limit=1000", as: "auditor", roles: ["auditor"])
                    var members: [String: String] = [:]
                    for member in served.body["members"]?.array ?? [] { members[member["rootHash"]!.string!] = member["state"]!.string! }
                    #expect(folded == members, "\(id) at \(position): \(served.raw)")
                    seen.formUnion(state?.identities.values.map(\.status.rawValue) ?? [])
                }
            }
            // The log held every state an identity passes through, so each was compared.
            #expect(seen.isSuperset(of: ["invited", "granted", "removed", "expired"]), "\(seen)")
        }
    }

    /// The simulator's `collaborations` (about 25 events each, every kind of its lifecycle),
    /// appended a few events of one collaboration at a time, collaborations drawn at random, so
    /// their events interleave in the log; answers their ids.
    static func append(seed: UInt64, collaborations: Int, to store: EventStore) async throws -> [String] {
        var simulator = LogSimulator(seed: seed, lifecycle: true)
        var random = SeededRandom(seed: seed ^ 0xA5A5)
        var pending = (0..<collaborations).map { _ in simulator.collaboration(events: 25) }
        let ids = pending.map(\.id)
        var versions: [String: Int64] = [:]
        let metadata = EventMetadata(actor: "psn-simulated")
        while !pending.isEmpty {
            let pick = Int(random.next() % UInt64(pending.count))
            let take = min(pending[pick].events.count, 1 + Int(random.next() % 4))
            let stream = Streams.collaboration(pending[pick].id)
            let events = pending[pick].events.prefix(take).map { $0.newEvent(metadata: metadata) }
            pending[pick].events.removeFirst(take)
            if pending[pick].events.isEmpty { pending.remove(at: pick) }
            let version = versions[stream, default: 0]
            _ = try await store.append(
                AppendRequest(streamId: stream, expectedVersion: version == 0 ? .noStream : .exact(version), events: events))
            versions[stream] = version + Int64(events.count)
        }
        return ids
    }
}
