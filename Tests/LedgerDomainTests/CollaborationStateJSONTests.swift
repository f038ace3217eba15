import Foundation
import Testing

@testable import LedgerDomain

/// The state's own coder against Foundation's: the same bytes written, the same state read, and
/// the same texts refused.
struct CollaborationStateJSONTests {
    /// Strings with everything an escape must handle: quotes, backslashes, slashes, every control
    /// character, DEL, non-ASCII and astral letters.
    static func text<G: RandomNumberGenerator>(_ random: inout G) -> String {
        let letters: [Unicode.Scalar] =
            (0..<0x20).map { Unicode.Scalar(UInt8($0)) } + ["\"", "\\", "/", "a", "Z", "0", " ", "\u{7F}", "é", "\u{2028}", "🙂", "中"]
        var text = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...12, using: &random) { text.append(letters.randomElement(using: &random)!) }
        return String(text)
    }

    static func state<G: RandomNumberGenerator>(_ random: inout G) -> CollaborationState {
        func maybe(_ value: String) -> String? { Bool.random(using: &random) ? value : nil }
        var identities: [String: CollaborationState.Identity] = [:]
        for _ in 0..<Int.random(in: 0...8, using: &random) {
            let status = [CollaborationState.IdentityStatus.invited, .granted, .removed, .expired].randomElement(using: &random)!
            let windows = Bool.random(using: &random) ? Int.random(in: -5...Int.max, using: &random) : nil
            var identity = CollaborationState.Identity(status: status, account: maybe(text(&random)), windows: windows)
            (identity.notBefore, identity.notAfter) = (maybe(text(&random)), maybe(text(&random)))
            identities[text(&random)] = identity
        }
        var grants: [String: String] = [:]
        for _ in 0..<Int.random(in: 0...5, using: &random) { grants[text(&random)] = text(&random) }
        return CollaborationState(
            collaborationId: text(&random), owner: text(&random), title: text(&random), identities: identities, grants: grants,
            defaultAccess: Bool.random(using: &random) ? DefaultAccess(stored: text(&random)) : nil)
    }

    @Test("written byte for byte as CanonicalJSON writes, and read back whole, on 2,000 random states")
    func sameBytes() throws {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let state = Self.state(&random)
            let json = CollaborationStateJSON.encode(state)
            #expect(json == CanonicalJSON.encode(state))
            #expect(try CollaborationStateJSON.decode(json) == state)
        }
    }

    /// Other writers' texts of a state (spaces, another key order, escaped slashes and letters,
    /// nulls, extra keys) read as JSONDecoder reads them.
    @Test("other writers' state texts (spacing, key order, escapes, nulls, extra keys) read as by JSONDecoder")
    func otherWriters() throws {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let state = Self.state(&random)
            // Foundation's JSONSerialization, pretty-printed: newlines, spaces, `\/`.
            let object = try JSONSerialization.jsonObject(with: Data(CanonicalJSON.encode(state).utf8))
            let pretty = String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted]), as: UTF8.self)
            #expect(try CollaborationStateJSON.decode(pretty) == state)
        }
        // As PostgreSQL's jsonb prints a state (a migration's or an erasure's rewrite), with what
        // another writer may add.
        let rewritten = #"""
            { "title" : "Trip \u00e9t\u00C9 \ud83d\ude42 a\/b \"q\" \\ \n\t\r\b\f", "owner": "p-1", "grants": {"p-2": "rh=="},
              "identities": {"rh==": {"status": "granted", "account": "p-2", "notBefore": null, "windows": 2, "later": [1, 2.5e3, {"x": [true, false, null]}]},
                             "rx==": {"windows": null, "status": "invited", "notAfter": "2030-01-01T00:00:00Z"}},
              "defaultAccess": null, "collaborationId": "c-1", "extra": {"nested": []} }
            """#
        #expect(try CollaborationStateJSON.decode(rewritten) == CanonicalJSON.decode(CollaborationState.self, from: rewritten))
        let read = try CollaborationStateJSON.decode(rewritten)
        #expect(read.title == "Trip étÉ 🙂 a/b \"q\" \\ \n\t\r\u{8}\u{c}")
        #expect(read.identities["rh=="]?.windows == 2 && read.identities["rx=="]?.notAfter == "2030-01-01T00:00:00Z")
    }

    @Test("texts JSONDecoder refuses are refused, and a trailing comma")
    func refused() {
        let good = #"{"collaborationId":"c","grants":{},"identities":{"r":{"status":"invited"}},"owner":"o","title":"t"}"#
        #expect((try? CollaborationStateJSON.decode(good)) != nil)
        func with(_ old: String, _ new: String) -> String { good.replacingOccurrences(of: old, with: new) }
        let bad: [String] = [
            "", "{", "[]", "null", good + "x", good + "{}", String(good.dropLast()),
            with(#""owner":"o","#, ""),
            with(#""grants":{},"#, ""),
            with(#""status":"invited""#, #""status":"member""#),
            with(#"{"status":"invited"}"#, "{}"),
            with(#""title":"t""#, #""title":7"#),
            with(#""title":"t""#, #""title":null"#),
            with(#""title":"t""#, "\"title\":\"a\u{1}b\""),
            with(#""title":"t""#, #""title":"\ud83d""#),
            with(#""title":"t""#, #""title":"\x41""#),
            with(#""title":"t""#, #""title":"\u12G4""#),
            with(#""status":"invited""#, #""status":"invited","windows":1.5"#),
            with(#""title":"t""#, #""title":"t","deep":"# + String(repeating: "[", count: 600)),
            with(#""title":"t""#, #""title":"t","word":nul"#),
        ]
        for text in bad {
            #expect(throws: (any Error).self, "\(text.prefix(120))") { try CollaborationStateJSON.decode(text) }
            #expect((try? CanonicalJSON.decode(CollaborationState.self, from: text)) == nil, "JSONDecoder reads \(text.prefix(120))")
        }
        // JSONDecoder takes a trailing comma; RFC 8259 and PostgreSQL's json do not, nor does this.
        #expect(throws: (any Error).self) { try CollaborationStateJSON.decode(with(#""title":"t""#, #""title":"t","#)) }
    }
}
