import Foundation
import LedgerDomain
import LedgerStore
import LedgerTestSupport
import PostgresNIO
import Testing

/// A collaboration's stream and a stream's collaboration follow one rule on each side: SQL's
/// `ledger_collaboration_stream` and `ledger_stream_collaboration` (with its test
/// `ledger_is_collaboration_stream`), which the function files and the ledger's own SQL call, and
/// Swift's `Streams`. Here they answer alike, on a real PostgreSQL, for streams of every kind: a
/// collaboration's, any other (the top log's, the privacy office's, a benchmark's), and near
/// misses of the prefix.
@Suite("Collaboration stream rule")
struct CollaborationStreamRuleTests {
    static func streams() -> [String] {
        var random = SystemRandomNumberGenerator()
        let prefix = Streams.collaborationPrefix
        let letters: [String] = ["a", "Z", "0", "-", "_", " ", "é", "e\u{301}", "\u{301}", "ß", "✓", "🙂", "中", "\u{2010}"]
        func text(_ length: Int) -> String {
            (0..<length).map { _ in letters.randomElement(using: &random)! }.joined()
        }
        var streams = [
            "", "c", "collaboration", prefix, "collaboration_x", "Collaboration-x", "COLLABORATION-x", " collaboration-x",
            "collaboration -x", "xcollaboration-x", "collaboration\u{2010}x", "collaboration-collaboration-x",
            "collaboration-\u{301}x", "collaboration-e\u{301}", "collaboration-é", "collaboration-🙂", "collaboration-中文",
            "shard-0", "shard-12", "index", PrivacyOffice.stream, "tiles-3", "bench-erase-1-2", "upgraded",
        ]
        streams += (0..<500).map { _ in Streams.collaboration(UUID().uuidString.lowercased()) }
        streams += (0..<100).map { _ in UUID().uuidString.lowercased() }
        // Every cut of the prefix, then anything: the near misses.
        streams += (0..<500).map { _ in
            String(prefix.prefix(Int.random(in: 0...prefix.count, using: &random))) + text(Int.random(in: 0..<20, using: &random))
        }
        streams += [Streams.collaboration(text(5_000)), Streams.collaboration(String(repeating: "x", count: 65_536))]
        return streams
    }

    @Test("ledger_stream_collaboration and ledger_is_collaboration_stream answer as Streams.collaborationId")
    func sqlAndSwiftAgree() async throws {
        let streams = Self.streams()
        try await withTestStore { _, client, _ in
            var answers: [(String?, Bool)] = []
            let rows = try await client.query(
                """
                SELECT ledger_stream_collaboration(t), ledger_is_collaboration_stream(t)
                FROM unnest(\(streams)::text[]) WITH ORDINALITY AS u(t, i) ORDER BY i
                """)
            for try await answer in rows.decode((String?, Bool).self) { answers.append(answer) }
            #expect(answers.count == streams.count)
            let differing = zip(streams, answers).filter { stream, answer in
                let swift = Streams.collaborationId(of: stream)
                return swift != answer.0 || (swift != nil) != answer.1
            }
            #expect(differing.isEmpty, "e.g. \(differing.prefix(3))")
            #expect(answers.contains { $0.0 == nil } && answers.contains { $0.0 == "" })
        }
    }

    @Test("ledger_collaboration_stream names a collaboration's stream as Streams.collaboration does")
    func streamOfCollaboration() async throws {
        let ids = [""] + Self.streams()
        try await withTestStore { _, client, _ in
            var streams: [String] = []
            let rows = try await client.query(
                "SELECT ledger_collaboration_stream(t) FROM unnest(\(ids)::text[]) WITH ORDINALITY AS u(t, i) ORDER BY i")
            for try await stream in rows.decode(String.self) { streams.append(stream) }
            #expect(streams == ids.map(Streams.collaboration))
            #expect(streams.allSatisfy { Streams.collaborationId(of: $0) != nil })
        }
    }

    @Test("an id is read by Unicode scalars, as PostgreSQL reads text: a combining mark may begin it")
    func byScalars() {
        #expect(Streams.collaborationId(of: "collaboration-\u{301}x") == "\u{301}x")
        #expect(Streams.collaborationId(of: "collaboration-") == "")
        #expect(Streams.collaborationId(of: "collaboration\u{2010}x") == nil)
        #expect(Streams.collaborationId(of: "shard-0") == nil)
    }

    /// The plan holds the expressions written out and no call; a collaboration's stream is found
    /// through the index.
    @Test("the functions are inlined: the projections' folds pay nothing for the calls")
    func inlined() async throws {
        try await withTestStore { _, client, _ in
            var plan: [String] = []
            let rows = try await client.query(
                """
                EXPLAIN (VERBOSE, COSTS OFF)
                SELECT ledger_stream_collaboration(stream_id) FROM ledger_events WHERE ledger_is_collaboration_stream(stream_id)
                UNION ALL SELECT stream_id FROM ledger_streams WHERE stream_id = ledger_collaboration_stream('x')
                """)
            for try await line in rows.decode(String.self) { plan.append(line) }
            let text = plan.joined(separator: "\n")
            for written in ["stream_id, 14) = 'collaboration-'::text", "stream_id, 15)", "Index Cond:", "= 'collaboration-x'::text"] {
                #expect(text.contains(written), "\(written) in \(text)")
            }
            for function in ["ledger_stream_collaboration", "ledger_is_collaboration_stream", "ledger_collaboration_stream"] {
                #expect(!text.contains(function), "\(function) in \(text)")
            }
        }
    }
}
