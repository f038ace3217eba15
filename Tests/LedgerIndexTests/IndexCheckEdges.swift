import Foundation
import LedgerIndex

/// What `IndexCheckLog` puts among a simulated log's events for both implementations to read
/// alike: data at the edges of the map function's JSON rules, and leaves at the edges of the
/// leaf format.
enum IndexCheckEdges {
    static let hash = Data((0..<32).map { UInt8($0 * 5) }).base64EncodedString()

    /// Data of a collaboration's event, each at an edge of the JSON rules.
    static func data() -> [String] {
        let hash = Self.hash
        let stray = String(hash.dropLast(2)) + "9="
        return [
            #"{"rootHash":"\#(hash)","n":\#(String(repeating: "9", count: 5_000))}"#, #"{"rootHash":"\#(hash)","n":1e999}"#,
            #"{"rootHash":"\#(hash)","rootHash":"\#(hash)"}"#, #"{"mentionedRootHash":"\#(hash)","n":"\ud800"}"#,
            #"{"rootHash":"\#(hash)","n":"\ud83d\ude00 é \u00e9"}"#, #"{"rootHash":"\#(hash)","n":NaN}"#, #"{"rootHash":"\#(stray)"}"#,
            #"{"rootHash":"\#(hash.replacingOccurrences(of: "/", with: #"\/"#))"}"#, "\u{FEFF}{\"rootHash\":\"\(hash)\"}",
            #"{"rootHash":"\#(hash)","n":\#(String(repeating: "[", count: 511) + String(repeating: "]", count: 511))}"#,
            #"{"rootHash":"\#(hash)","n":\#(String(repeating: "[", count: 512) + String(repeating: "]", count: 512))}"#,
            #"{"rootHash":"\#(hash)","n":\#(String(repeating: "{\"a\":", count: 600) + "1" + String(repeating: "}", count: 600))}"#,
            #"{"r\u006FotHash":"\#(hash)"}"#, #"{"rootHash":"\#(hash)","n":01}"#, #"{"rootHash":"\#(hash)","n":-0.5E+3}"#,
            #"{"rootHash":"\#(hash)"}  "#, #"[{"rootHash":"\#(hash)"}]"#, #"{"rootHash":"\#(hash)","n":"tab\#tin"}"#,
            // One identity named twice: one key, its value stepped once for the event.
            #"{"rootHash":"\#(hash)","mentionedRootHash":"\#(hash)"}"#, #"{"mentionedRootHash":"\#(hash)","n":1,"rootHash":"\#(hash)"}"#,
            // Digits other than ASCII's are no JSON number (RFC 8259), whatever `\d` matches.
            #"{"rootHash":"\#(hash)","n":1٥}"#, #"{"rootHash":"\#(hash)","n":1.٥}"#, #"{"rootHash":"\#(hash)","n":1e٥}"#,
            #"{"rootHash":"\#(hash)","n":٥}"#,
        ]
    }

    /// Leaves that are not exactly one event's bytes, each of which yields no key: a text that is
    /// not UTF-8 (in the stream id, the type, the data, the metadata: an invalid byte, a truncated
    /// sequence, an overlong one, an encoded surrogate), a leaf cut short or extended, and the
    /// empty leaf. Each is built from an event naming an identity, so a reader that took it for
    /// an event would fold keys the other does not.
    static func leaves() -> [[UInt8]] {
        let data = #"{"rootHash":"\#(hash)","n":"@@@"}"#
        func leaf(stream: String = "collaboration-leaf-edge", type: String = "IdentityAdded") -> [UInt8] {
            var log = SimulatedLog()
            log.append(stream: stream, type: type, data: data)
            return log.leaves[0]
        }
        let whole = leaf()
        return [
            patched(leaf(), "@@@", [0xFF, 0x41, 0x41]), patched(leaf(), "@@@", [0x41, 0xC3, 0x28]),
            patched(leaf(), "@@@", [0x41, 0xC0, 0xAF]), patched(leaf(), "@@@", [0xED, 0xA0, 0x80]),
            patched(leaf(), "psn-test", [0x70, 0x73, 0x6E, 0x2D, 0x74, 0x65, 0x73, 0xE9]),
            patched(leaf(stream: "collaboration-@@"), "@@", [0xE9, 0x41]),
            patched(leaf(type: "Identity@@Added"), "@@", [0xFE, 0x41]),
            Array(whole.dropLast()), Array(whole.prefix(30)), whole + [0], whole + whole, [],
        ]
    }

    /// `leaf` with the first occurrence of `marker`'s UTF-8 replaced by `bytes`, as long.
    static func patched(_ leaf: [UInt8], _ marker: String, _ bytes: [UInt8]) -> [UInt8] {
        let needle = Array(marker.utf8)
        precondition(needle.count == bytes.count, "a patch as long as its marker: the lengths before it stay right")
        let at = (0...(leaf.count - needle.count)).first { leaf[$0..<$0 + needle.count].elementsEqual(needle) }!
        var out = leaf
        out.replaceSubrange(at..<at + needle.count, with: bytes)
        return out
    }
}
