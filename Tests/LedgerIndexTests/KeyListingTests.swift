import LedgerDeviceSimulator
import LedgerIndex
import Testing

/// A key's listing under a revision verifies exactly when it is the key's whole list: every
/// tampering an untrusted server could try is refused, each by the link it breaks.
@Suite("Key listings")
struct KeyListingTests {
    /// A log, its index at `size`, and the listing of `key` there as an honest server answers it.
    struct Fixture {
        let log = SimulatedLog(seed: 23, collaborations: 12, eventsEach: 20)
        let index = LogIndex(store: MemoryNodeStore())
        var revision: IndexRevision!

        init() async throws {
            revision = try IndexRevision(logSize: Int64(log.leaves.count), root: try await index.append(log.leaves, from: 1))
        }

        func listing(_ key: IndexKey, positions: [Int64]? = nil, proofOf other: IndexKey? = nil) async throws -> KeyListing {
            let positions = positions ?? log.expected[key, default: []]
            return KeyListing(
                revision: revision, proof: try await index.tree.proof(for: (other ?? key).hash),
                // A position past the log is listed with the last leaf.
                listed: positions.map { KeyListing.Listed(position: $0, leaf: log.leaves[min(Int($0), log.leaves.count) - 1]) })
        }

        /// The key with the most events, and another of the same kind.
        var keys: (IndexKey, IndexKey) {
            let sorted = log.expected.sorted { $0.value.count > $1.value.count }.map(\.key)
            return (sorted[0], sorted[1])
        }
    }

    @Test("an honest listing verifies, for every key, and an absent key's empty one too")
    func honest() async throws {
        let fixture = try await Fixture()
        for (key, positions) in fixture.log.expected {
            #expect(try await fixture.listing(key).verify(key: key) == positions)
        }
        let absent = IndexKey.collaboration("never-in-the-log")
        #expect(try await fixture.listing(absent, positions: []).verify(key: absent) == [])
    }

    @Test("a position dropped, added, moved or repeated, or a leaf swapped, is refused")
    func tampered() async throws {
        let fixture = try await Fixture()
        let (key, other) = fixture.keys
        let honest = fixture.log.expected[key]!
        let elsewhere = fixture.log.expected[other]!.first { !honest.contains($0) }!
        for positions in [
            Array(honest.dropLast()), Array(honest.dropFirst()), Array(honest.prefix(2) + honest.dropFirst(3)),  // dropped
            (honest + [elsewhere]).sorted(),  // added: a leaf that does not name the key
            [honest[1], honest[0]] + honest.dropFirst(2),  // out of order
            [honest[0]] + honest,  // repeated
            honest.map { $0 == honest.last! ? fixture.revision.logSize + 1 : $0 },  // past the revision
        ] {
            let listing = try await fixture.listing(key, positions: positions)
            #expect(throws: KeyListing.Refused.self, "\(positions)") { try listing.verify(key: key) }
        }
        // A leaf swapped for another that names the key too, at the same position.
        var swapped = try await fixture.listing(key)
        let second = KeyListing.Listed(position: honest[1], leaf: fixture.log.leaves[Int(honest[2]) - 1])
        swapped = KeyListing(
            revision: swapped.revision, proof: swapped.proof, listed: [swapped.listed[0], second] + swapped.listed.dropFirst(2))
        #expect(throws: KeyListing.Refused.self) { try swapped.verify(key: key) }
    }

    @Test("an absence shown for a present key, another key's proof, or another revision's root is refused")
    func wrongProofs() async throws {
        let fixture = try await Fixture()
        let (key, other) = fixture.keys
        // Another key's proof: its path is not the key's.
        let others = try await fixture.listing(key, proofOf: other)
        #expect(throws: KeyListing.Refused.self) { try others.verify(key: key) }
        // A present key passed off as absent: the proof of an absent key's path, nothing listed.
        let passedOff = try await fixture.listing(key, positions: [], proofOf: .collaboration("never-in-the-log"))
        #expect(throws: KeyListing.Refused.self) { try passedOff.verify(key: key) }
        // Nothing listed beside a proof of presence.
        let empty = try await fixture.listing(key, positions: [])
        #expect(throws: KeyListing.Refused.self) { try empty.verify(key: key) }
        // The listing of an older revision presented under the current one: its proof is under another root.
        let older = LogIndex(store: MemoryNodeStore())
        let half = fixture.log.leaves.count / 2
        _ = try await older.append(fixture.log.leaves.prefix(half), from: 1)
        let stale = KeyListing(
            revision: fixture.revision, proof: try await older.tree.proof(for: key.hash),
            listed: fixture.log.expected[key]!.filter { $0 <= half }.map { .init(position: $0, leaf: fixture.log.leaves[Int($0) - 1]) })
        #expect(throws: KeyListing.Refused.self) { try stale.verify(key: key) }
    }
}
