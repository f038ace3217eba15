import Foundation
import LedgerDomain
import LedgerWire

/// Collaborations with a realistic life: started, identities added, recipients granted on
/// one to three devices, highlights, some identities removed (their access revoked), some
/// proofs refused; with `lifecycle`, also identities invited again, given a window, expired or
/// revoked alone, and recipients granted again (the projection tests' histories). Deterministic
/// for a seed; without `lifecycle`, the same logs as before it existed. Used by projection tests
/// and `ledger bench replay`.
public struct LogSimulator: Sendable {
    public struct Collaboration: Sendable {
        public var id: String
        public var events: [CollaborationEvent]
    }

    var random: SeededRandom
    let lifecycle: Bool

    public init(seed: UInt64, lifecycle: Bool = false) {
        random = SeededRandom(seed: seed)
        self.lifecycle = lifecycle
    }

    /// One collaboration of about `events` events (at least its start and a few identities).
    public mutating func collaboration(events target: Int = 24) -> Collaboration {
        let id = UUID(uuid: random.uuidBytes()).uuidString.lowercased()
        let owner = "owner-\(random.next() % 1000)"
        let start = StartCollaboration(
            localIdentifier: "doc-\(random.next() % 100_000)", title: "Document \(random.next() % 10_000)",
            initiatorHandle: "\(owner)@example.com", initiatorName: "Owner",
            shareOptions: ShareOptions(
                summary: "Anyone can edit",
                groups: [
                    .init(
                        identifier: "permission", title: "Permission", kind: .picker,
                        options: [
                            .init(identifier: "rw", title: "Can make changes", selected: true),
                            .init(identifier: "ro", title: "Read only", selected: false),
                        ])
                ]))
        var events: [CollaborationEvent] = [
            start.started(
                collaborationId: id, owner: owner, universalLink: "https://ledger.example.com/collaborations/\(id)",
                commitments: start.commitments())
        ]
        var current: [(RootHash, String?)] = []  // identity, granted account
        var gone: [RootHash] = []  // removed or expired (lifecycle: may be invited again)
        var people = 0
        while events.count < target {
            switch random.next() % 20 {
            case 0...5:  // a new identity, usually verified soon on a device or more
                let hash = try! RootHash(bytes: random.bytes(32))
                people += 1
                let account = "acct-\(id.prefix(8))-\(people)"
                events.append(.identityAdded(.init(rootHash: hash)))
                current.append((hash, nil))
                if random.next() % 5 != 0 {
                    for device in 0..<Int(1 + random.next() % 3) { events.append(granted(hash, account, device: device)) }
                    current[current.count - 1].1 = account
                }
            case 6:  // a removal; a granted account loses access
                guard !current.isEmpty else { continue }
                let (hash, account) = current.remove(at: Int(random.next() % UInt64(current.count)))
                gone.append(hash)
                events.append(.identityRemoved(.init(rootHash: hash, account: account)))
                if let account {
                    events.append(.accessRevoked(.init(rootHash: hash, account: account, reason: "identity_removed")))
                }
            case 8 where lifecycle:  // an identity invited again, with a window: its grant and removal are history
                if !gone.isEmpty, random.next() % 2 == 0 {
                    // One removed or expired, back.
                    let hash = gone.remove(at: Int(random.next() % UInt64(gone.count)))
                    events.append(.identityAdded(.init(rootHash: hash, window: AccessWindow(stored: nil, Self.windowEnd))))
                    current.append((hash, nil))
                } else {
                    guard !current.isEmpty else { continue }
                    let i = Int(random.next() % UInt64(current.count))
                    events.append(.identityAdded(.init(rootHash: current[i].0, window: AccessWindow(stored: nil, Self.windowEnd))))
                    current[i].1 = nil
                }
            case 9 where lifecycle:  // a window changed
                guard !current.isEmpty else { continue }
                let hash = current[Int(random.next() % UInt64(current.count))].0
                let start = random.next() % 2 == 0 ? nil : "2026-01-01T00:00:00.000000Z"
                events.append(.accessWindowChanged(.init(rootHash: hash, window: AccessWindow(stored: start, Self.windowEnd))))
            case 10 where lifecycle:  // a grant revoked, the identity kept
                guard let i = current.indices.first(where: { current[$0].1 != nil }) else { continue }
                events.append(.accessRevoked(.init(rootHash: current[i].0, account: current[i].1!, reason: "revoked")))
                current[i].1 = nil
            case 11 where lifecycle:  // a window ended: the identity expired (its account kept, for the record)
                guard !current.isEmpty else { continue }
                let (hash, account) = current.remove(at: Int(random.next() % UInt64(current.count)))
                events.append(.accessExpired(.init(rootHash: hash, account: account, dueAt: Self.windowEnd)))
                gone.append(hash)
            case 12 where lifecycle:  // a proof: the first identity again (its recipient proves again), or one drawn
                guard !current.isEmpty else { continue }
                let i = random.next() % 2 == 0 ? 0 : Int(random.next() % UInt64(current.count))
                if current[i].1 == nil {
                    people += 1
                    current[i].1 = "acct-\(id.prefix(8))-\(people)"
                }
                events.append(granted(current[i].0, current[i].1!, device: 0))
            case 7:  // a refused proof
                events.append(
                    .proofRejected(
                        .init(
                            account: "mallory", proofRequestId: UUID(uuid: random.uuidBytes()).uuidString.lowercased(),
                            challengeId: UUID(uuid: random.uuidBytes()).uuidString.lowercased(), reason: "bad_signature", rootHash: nil)))
            default:  // highlights
                // A granted identity drawn at random (a few draws, not a scan: a scan of every
                // identity per notice made a 1,000,000-event collaboration quadratic).
                func grantedPick() -> (RootHash, String?)? {
                    for _ in 0..<4 where !current.isEmpty {
                        let pick = current[Int(random.next() % UInt64(current.count))]
                        if pick.1 != nil { return pick }
                    }
                    return nil
                }
                let actor = grantedPick()?.1 ?? owner
                if random.next() % 4 == 0, let mentioned = grantedPick() {
                    events.append(.highlightPosted(.init(kind: .mention, trigger: nil, mentionedRootHash: mentioned.0, account: actor)))
                } else {
                    let trigger = random.next() % 2 == 0 ? "edit" : "comment"
                    events.append(.highlightPosted(.init(kind: .change, trigger: trigger, mentionedRootHash: nil, account: actor)))
                }
            }
        }
        return Collaboration(id: id, events: events)
    }

    /// A grant of `hash` to `account` on one of its devices (its proof's bytes drawn at random).
    mutating func granted(_ hash: RootHash, _ account: String, device: Int) -> CollaborationEvent {
        .accessGranted(
            .init(
                rootHash: hash, account: account, proofRequestId: UUID(uuid: random.uuidBytes()).uuidString.lowercased(),
                challengeId: UUID(uuid: random.uuidBytes()).uuidString.lowercased(),
                proof: IdentityProof(
                    publicKey: random.bytes(65), publicKeyIndex: UInt64(device), inclusionHashes: [random.bytes(32), random.bytes(32)]),
                challenge: random.bytes(32), signature: random.bytes(64)))
    }

    /// The end of the windows the simulator gives (far off: no window here ends by the clock).
    static let windowEnd = "2099-01-01T00:00:00.000000Z"
}

/// SplitMix64: small, fast, deterministic.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) } }

    mutating func uuidBytes() -> uuid_t {
        let b = bytes(16)
        return (
            b[0], b[1], b[2], b[3], b[4], b[5], b[6] & 0x0F | 0x40, b[7], b[8] & 0x3F | 0x80, b[9], b[10], b[11], b[12], b[13], b[14], b[15]
        )
    }
}
