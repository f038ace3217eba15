/// A strict JSON syntax check (RFC 8259, any value at the top, as PostgreSQL's `json` input
/// accepts): strings without raw control characters, escapes from the RFC's list, `\u`
/// surrogates in pairs, numbers without leading zeros, nesting at most `maxDepth` deep.
///
/// The store checks each event's JSON before its append joins a group, so a bad event fails
/// its own append and not the group's transaction. One pass over the UTF-8 bytes, nothing
/// built: Foundation's JSONSerialization, which parses into objects, cost a third of a
/// batched append's time. `JSONReader` skips and checks values with the same scanner, so the
/// state's reader and the store's check hold one grammar.
public enum JSONSyntax {
    public static let maxDepth = 512

    public static func isValid(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            var scanner = Scanner(bytes: bytes)
            return scanner.document()
        }
    }

    struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func document() -> Bool {
            skipSpace()
            guard value(depth: 0) else { return false }
            skipSpace()
            return index == bytes.count
        }

        mutating func skipSpace() {
            while let c = current, c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { index += 1 }
        }

        mutating func take(_ c: UInt8) -> Bool {
            guard current == c else { return false }
            index += 1
            return true
        }

        mutating func value(depth: Int) -> Bool {
            guard depth < JSONSyntax.maxDepth, let c = current else { return false }
            switch c {
            case UInt8(ascii: "{"):
                index += 1
                skipSpace()
                if take(UInt8(ascii: "}")) { return true }
                while true {
                    skipSpace()
                    guard string() else { return false }
                    skipSpace()
                    guard take(UInt8(ascii: ":")) else { return false }
                    skipSpace()
                    guard value(depth: depth + 1) else { return false }
                    skipSpace()
                    if take(UInt8(ascii: ",")) { continue }
                    return take(UInt8(ascii: "}"))
                }
            case UInt8(ascii: "["):
                index += 1
                skipSpace()
                if take(UInt8(ascii: "]")) { return true }
                while true {
                    skipSpace()
                    guard value(depth: depth + 1) else { return false }
                    skipSpace()
                    if take(UInt8(ascii: ",")) { continue }
                    return take(UInt8(ascii: "]"))
                }
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
            default: return false
            }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let w = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
            guard bytes.count - index >= w.count else { return false }
            for k in 0..<w.count where bytes[index + k] != w[k] { return false }
            index += w.count
            return true
        }

        mutating func digits() -> Int {
            let start = index
            while let c = current, c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") { index += 1 }
            return index - start
        }

        mutating func number() -> Bool {
            _ = take(UInt8(ascii: "-"))
            if take(UInt8(ascii: "0")) {
                // No leading zeros: "01" is not a number.
                if let c = current, c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") { return false }
            } else if digits() == 0 {
                return false
            }
            if take(UInt8(ascii: ".")), digits() == 0 { return false }
            if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
                if !take(UInt8(ascii: "+")) { _ = take(UInt8(ascii: "-")) }
                if digits() == 0 { return false }
            }
            return true
        }

        mutating func hex4() -> UInt32? {
            guard bytes.count - index >= 4 else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let c = bytes[index]
                let digit: UInt32
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
                default: return nil
                }
                value = value << 4 | digit
                index += 1
            }
            return value
        }

        mutating func string() -> Bool {
            guard take(UInt8(ascii: "\"")) else { return false }
            while let c = current {
                index += 1
                switch c {
                case UInt8(ascii: "\""): return true
                case 0..<0x20: return false
                case UInt8(ascii: "\\"):
                    guard let e = current else { return false }
                    index += 1
                    switch e {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        continue
                    case UInt8(ascii: "u"):
                        guard let unit = hex4() else { return false }
                        if unit >= 0xDC00 && unit <= 0xDFFF { return false }  // a low surrogate alone
                        if unit >= 0xD800 && unit <= 0xDBFF {  // a high one: a low one must follow
                            guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")), let low = hex4(),
                                low >= 0xDC00 && low <= 0xDFFF
                            else { return false }
                        }
                    default: return false
                    }
                default: continue
                }
            }
            return false
        }
    }
}
