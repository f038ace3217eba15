import Foundation
import LedgerDeviceSimulator
import LedgerDomain
import LedgerIndex
import Testing

@Suite("The map function")
struct IndexMapTests {
    static let rootHash = Data(repeating: 7, count: 32).base64EncodedString()
    static let stream = "collaboration-0b9e0a52-5f7b-4d59-8d1f-6c1c7f0e2a11"

    static func keys(_ data: String, stream: String = stream) -> [IndexKey] {
        IndexMap.keys(streamId: stream, data: data)
    }

    @Test("each event of a simulated log yields its collaboration and the identities it names")
    func simulatedLog() throws {
        let log = SimulatedLog(seed: 11, collaborations: 12, eventsEach: 40)
        var seen: [IndexKey: [Int64]] = [:]
        for (offset, leaf) in log.leaves.enumerated() {
            for key in IndexMap.keys(leaf: leaf) { seen[key, default: []].append(Int64(offset + 1)) }
        }
        #expect(log.leaves.count > 480)
        #expect(log.expected.keys.contains { if case .identity = $0 { true } else { false } })
        #expect(seen == log.expected)
    }

    /// One event of each type a collaboration's stream holds (a `HighlightPosted` and a
    /// `ProofRejected` with and without an identity): `SimulatedLog.named(by:)` switches over
    /// every case, and `everyType` counts the types.
    static func collaborationEvents() throws -> [CollaborationEvent] {
        var simulator = LogSimulator(seed: 1, lifecycle: true)
        let hash = try RootHash(bytes: Array(repeating: 5, count: 32))
        let proof = IdentityProof(publicKey: [4], publicKeyIndex: 0, inclusionHashes: [])
        let end = "2099-01-01T00:00:00.000000Z"
        func highlight(_ mentioned: String) throws -> CollaborationEvent {
            try CollaborationEvent(type: "HighlightPosted", json: #"{"account":"psn-1","kind":"mention"\#(mentioned)}"#)
        }
        return [
            simulator.collaboration(events: 1).events[0], .identityAdded(.init(rootHash: hash)),
            .identityRemoved(.init(rootHash: hash, account: "psn-1")),
            .accessGranted(
                .init(rootHash: hash, account: "psn-1", proofRequestId: "r", challengeId: "c", proof: proof, challenge: [1], signature: [2])
            ),
            .accessRevoked(.init(rootHash: hash, account: "psn-1", reason: "revoked")),
            .proofRejected(.init(account: "psn-1", proofRequestId: "r", challengeId: "c", reason: "bad_signature", rootHash: hash)),
            .proofRejected(.init(account: "psn-1", proofRequestId: "r", challengeId: "c", reason: "bad_signature", rootHash: nil)),
            try highlight(#","mentionedRootHash":"\#(hash.base64)""#), try highlight(""),
            .accessWindowChanged(.init(rootHash: hash, window: AccessWindow(stored: nil, end))),
            .accessExpired(.init(rootHash: hash, account: nil, dueAt: end)),
        ]
    }

    /// Every event type the domain defines, with data as it writes it: the collaborations' (above)
    /// and those of the other streams (erasures, the top log's records, index revisions).
    static func everyEvent() throws -> [(type: String, data: String)] {
        try collaborationEvents().map { ($0.type, $0.json) } + [
            ("PersonalDataErased", #"{"pseudonym":"psn-1","reason":"T-1","requester":"psn-2"}"#),
            (ShardCheckpointRecorded.type, #"{"rootHash":"\#(rootHash)","shard":0}"#),
            (IndexRevision.type, try IndexRevision(logSize: 1, root: .zero).data),
        ]
    }

    @Test("every event type yields the identities the domain's types name, with and without one")
    func everyType() throws {
        let events = try Self.collaborationEvents()
        for event in events {
            let identities = Array(Self.keys(event.json).dropFirst())
            #expect(identities == SimulatedLog.named(by: event).map(IndexKey.identity), "\(event.type)")
        }
        #expect(Set(events.map(\.type)).count == 9, "every type")
        #expect(events.filter { Self.keys($0.json).count == 2 }.count == 8)
    }

    @Test("no event type's keys depend on its accounts or committed values, which erasure removes")
    func personalValuesAreNotKeys() throws {
        let events = try Self.everyEvent()
        #expect(Set(events.map(\.type)).count == 12, "every type the domain defines")
        // Whatever an account or a committed value held, even an identity's base64: never a key.
        let lookalike = Data(repeating: 9, count: 32).base64EncodedString()
        var replaced = Set<String>()
        for (type, data) in events {
            let personal = PersonalData.accountFields(type) + PersonalData.valueFields
            #expect(Set(IndexMap.identityMembers).isDisjoint(with: personal), "\(type)")
            var object = try #require(try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any])
            for field in personal where object[field] != nil {
                object[field] = lookalike
                replaced.insert(field)
            }
            let changed = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
            #expect(Self.keys(changed) == Self.keys(data), "\(type): \(changed)")
            #expect(!Self.keys(changed).contains(.identity(Hash256(Array(repeating: 9, count: 32))!)), "\(type)")
        }
        let fields = ["owner", "account", "pseudonym", "requester", "title", "initiatorHandle", "localIdentifier"]
        #expect(replaced.isSuperset(of: fields), "\(replaced)")
    }

    @Test("identity members are read as JSON reads them: escapes, whitespace, any order, any type")
    func readAsJSON() {
        let identity = IndexKey.identity(Hash256(Array(repeating: 7, count: 32))!)
        let escaped = Self.rootHash.replacingOccurrences(of: "B", with: #"\u0042"#)
        for data in [
            #"{"rootHash":"\#(Self.rootHash)"}"#, #" { "n" : [1, {"rootHash": 2}], "rootHash" : "\#(escaped)" } "#,
            #"{"mentionedRootHash":"\#(Self.rootHash)","rootHash":null,"kind":"mention"}"#,
            #"{"rootHash":"\#(Self.rootHash)","mentionedRootHash":"\#(Self.rootHash)"}"#,
        ] {
            #expect(Self.keys(data).last == identity, "\(data)")
            #expect(Self.keys(data).count == 2, "one key per identity, however often named: \(data)")
        }
        let slashes = Data([0xFF, 0xFF] + Array(repeating: 0, count: 30)).base64EncodedString()
        #expect(slashes.contains("/"))
        #expect(Self.keys(#"{"rootHash":"\#(slashes.replacingOccurrences(of: "/", with: #"\/"#))"}"#).count == 2)
    }

    @Test("data that is not JSON as the store admits it, or not one object, yields the collaboration alone")
    func malformedData() {
        let good = Self.rootHash
        let stray = String(good.dropLast(2)) + "9="  // stray bits in the last character
        let nested = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        for data in [
            #"{"rootHash":"\#(good)","rootHash":"\#(good)"}"#, #"{"rootHash":"\#(good)","root\u0048ash":"\#(good)"}"#,
            #"[{"rootHash":"\#(good)"}]"#, #"{"rootHash":"\#(good)"} x"#, #"{"rootHash":"\#(good)",}"#,
            #"{"rootHash":"\#(good)","n":NaN}"#, #"{"rootHash":"\#(good)","n":"\ud800"}"#, #"{"rootHash":"\#(good)","n":01}"#,
            #"{"rootHash":"\#(good)","n":\#(nested)}"#, #"{"rootHash":"\#(stray)"}"#, #"{"rootHash":"\#(good.dropLast())"}"#,
            #"{"rootHash":"\#(Data(repeating: 7, count: 31).base64EncodedString())"}"#,
            #"{"rootHash":"\#(Data(repeating: 7, count: 33).base64EncodedString())"}"#, #"{"rootHash":7}"#,
            #"{"rootHash":["\#(good)"]}"#, #"{"RootHash":"\#(good)"}"#, #"{"n":{"rootHash":"\#(good)"}}"#,
        ] {
            #expect(Self.keys(data).count == 1, "\(data)")
        }
        let deepest = String(repeating: "[", count: 511) + String(repeating: "]", count: 511)
        #expect(Self.keys(#"{"rootHash":"\#(good)","n":\#(deepest)}"#).count == 2, "511 arrays in the object: 512 deep")
    }

    @Test("a leaf that does not read back as exactly one event yields no key")
    func malformedLeaves() {
        var log = SimulatedLog(seed: 3, collaborations: 1, eventsEach: 3)
        log.append(stream: Self.stream, type: "IdentityAdded", data: #"{"rootHash":"\#(Self.rootHash)"}"#)
        let leaf = log.leaves.last!
        #expect(IndexMap.keys(leaf: leaf).count == 2)
        #expect(IndexMap.keys(leaf: Array(leaf.dropLast())).isEmpty)
        #expect(IndexMap.keys(leaf: leaf + [0]).isEmpty)
        var invalid = leaf
        invalid[invalid.count - 40] = 0xFF  // inside the data or metadata: not UTF-8
        #expect(IndexMap.keys(leaf: invalid).isEmpty)
        #expect(IndexMap.keys(leaf: []).isEmpty)
    }
}
