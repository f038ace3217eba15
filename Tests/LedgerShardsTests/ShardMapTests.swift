import LedgerDomain
import Testing

@testable import LedgerShards

/// The shard map's own rules, and the PL/Proxy definitions it refuses rather than misread.
struct ShardMapTests {
    @Test("a map needs a power-of-two number of partitions, each naming a shard")
    func partitionCounts() throws {
        for count in [0, 3, 5, 6, 12] {
            #expect(throws: ShardMap.Invalid.partitionCount(count)) { try ShardMap(partitions: Array(repeating: "a", count: count)) }
        }
        #expect(throws: ShardMap.Invalid.emptyShard(partition: 1)) { try ShardMap(partitions: ["a", ""]) }
        for count in [1, 2, 4, 1024] {
            #expect(try ShardMap(partitions: Array(repeating: "a", count: count)).partitions.count == count)
        }
    }

    @Test("every id lands in a partition of the map, and one shard's map holds them all")
    func partitionsInRange() throws {
        let map = try ShardMap(partitions: ["a", "b", "b", "a", "c", "a", "b", "a"])
        #expect(map.shards == ["a", "b", "c"])
        var used: Set<Int> = []
        for n in 0..<2_000 {
            let partition = map.partition(of: "collaboration-\(n)")
            #expect((0..<8).contains(partition))
            used.insert(partition)
        }
        #expect(used.count == 8)
        let single = try ShardMap(partitions: ["only"])
        #expect((0..<100).allSatisfy { single.shard(of: "c\($0)") == "only" })
    }

    @Test("the map the top log records: shard indexes placing every id as the map does; malformed refused")
    func recordedMap() throws {
        let map = try ShardMap(partitions: ["a", "b", "b", "a", "c", "a", "b", "a"])
        let recorded = map.recorded
        #expect(recorded.partitions == [0, 1, 1, 0, 2, 0, 1, 0])
        for n in 0..<2_000 {
            let id = "collaboration-\(n)"
            #expect(map.shards[recorded.shard(of: id)] == map.shard(of: id), "\(id)")
        }
        let json = CanonicalJSON.encode(recorded)
        #expect(json == #"{"partitions":[0,1,1,0,2,0,1,0]}"#)
        #expect(try ShardMapRecorded.entry(type: ShardMapRecorded.type, streamId: ShardMapRecorded.stream, data: json) == recorded)
        for (type, stream, data) in [
            ("ShardCheckpointRecorded", ShardMapRecorded.stream, json), (ShardMapRecorded.type, "shard-0", json),
            (ShardMapRecorded.type, ShardMapRecorded.stream, #"{"partitions":[0,1,1]}"#),
            (ShardMapRecorded.type, ShardMapRecorded.stream, #"{"partitions":[]}"#),
            (ShardMapRecorded.type, ShardMapRecorded.stream, #"{"partitions":[0,-1]}"#),
            (ShardMapRecorded.type, ShardMapRecorded.stream, #"{"partitions":"0"}"#),
            (ShardMapRecorded.type, ShardMapRecorded.stream, #"{"partitions":[0, 1]}"#),
        ] {
            #expect(throws: ShardMapRecorded.Refused.self, "\(type) \(stream) \(data)") {
                try ShardMapRecorded.entry(type: type, streamId: stream, data: data)
            }
        }
    }

    @Test("PostgreSQL's hashtext on known values (from a PostgreSQL 15 server)")
    func knownHashes() {
        for (text, hash) in Self.known { #expect(PostgresHashText.hash(text) == hash, "\(text)") }
    }

    /// `SELECT hashtext(t)` on PostgreSQL 15 (x86-64), every tail length 0-12 and one long value.
    static let known: [String: Int32] = [
        "": -1_477_818_771, "a": 1_075_015_857, "ab": 1_718_550_461, "abc": -785_388_649, "abcd": -393_934_804,
        "abcde": -445_659_580, "abcdef": -1_747_460_160, "abcdefg": 501_636_814, "abcdefgh": -1_960_928_205,
        "abcdefghi": -92_131_489, "abcdefghij": 1_948_051_852, "abcdefghijk": -1_483_803_693, "abcdefghijkl": -1_586_087_212,
        "collaboration-2f9c1d04-5b7e-4c1a-9d2e-7a8b6c5d4e3f": -175_974_463, "Ünïcødé ✓ 🙂": -1_702_312_159,
    ]

    @Test("a PL/Proxy definition is read as PL/Proxy reads it")
    func clusterDefinition() throws {
        let map = try ShardCluster.map(
            server: "s", serverOptions: ["p1=dbname=b", "connection_lifetime=1800", "partition_0=dbname=a", "p2=dbname=a", "p3=dbname=b"],
            wrapperOptions: ["query_timeout=10", "modular_mapping=0"])
        #expect(map.partitions == ["dbname=a", "dbname=b", "dbname=a", "dbname=b"])
        #expect(ShardCluster.partitionNumber("p12") == 12)
        #expect(ShardCluster.partitionNumber("partition_3") == 3)
        for name in ["p", "p+1", "p 1", "p1a", "px", "p٣"] { #expect(ShardCluster.partitionNumber(name) == nil, "\(name)") }
    }

    @Test("a PL/Proxy definition the map would misread is refused")
    func refusedDefinitions() {
        let refused: [(server: [String], wrapper: [String], says: String)] = [
            (["p0=a", "p1=b", "modular_mapping=1"], [], "modular_mapping"),
            (["p0=a", "p1=b"], ["modular_mapping=1"], "modular_mapping"),
            (["p0=a", "p2=b"], [], "without gaps"),
            (["p1=a", "p2=b"], [], "without gaps"),
            ([], [], "without gaps"),
            (["p0=a", "partition_0=b"], [], "twice"),
            (["p0=a", "p1=b", "p2=c"], [], "power-of-two"),
            (["p0=a", "p+1=b"], [], "unknown option p+1"),
            (["p0=a", "hosts=b"], [], "unknown option hosts"),
            (["p0="], [], "names no shard"),
        ]
        for (server, wrapper, says) in refused {
            #expect(throws: ShardCluster.Unusable.self, "\(server) \(wrapper)") {
                try ShardCluster.map(server: "s", serverOptions: server, wrapperOptions: wrapper)
            }
            do {
                _ = try ShardCluster.map(server: "s", serverOptions: server, wrapperOptions: wrapper)
            } catch {
                #expect("\(error)".contains(says), "\(server) \(wrapper): \(error)")
            }
        }
    }
}
