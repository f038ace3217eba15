/// A pull reader over one JSON text (RFC 8259), for the few documents read on a hot path
/// (`CollaborationStateJSON`): it reads values where the caller expects them and skips the rest.
/// Nothing is built but the strings and numbers asked for. What it skips, numbers and `\u`
/// escapes go through `JSONSyntax`'s scanner: one grammar with the store's own check. Public for
/// the verifiable index's map function (LedgerIndex's `IndexMap`), which reads an event's data
/// with the same grammar.
public struct JSONReader {
    public struct Malformed: Error, CustomStringConvertible {
        var offset: Int
        var expected: String
        public var description: String { "malformed JSON at byte \(offset): expected \(expected)" }
    }

    private let bytes: [UInt8]
    private var index = 0

    public init(_ text: String) { bytes = Array(text.utf8) }

    /// The text holds nothing after the value read.
    public mutating func end() throws {
        skipSpace()
        guard index == bytes.count else { throw malformed("the end") }
    }

    /// Reads an object, calling `member` with each key; `member` must read or skip its value.
    public mutating func object(_ member: (inout JSONReader, String) throws -> Void) throws {
        try expect(UInt8(ascii: "{"))
        skipSpace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            let key = try string()
            try expect(UInt8(ascii: ":"))
            try member(&self, key)
            skipSpace()
            guard let next = peek() else { throw malformed("',' or '}'") }
            index += 1
            if next == UInt8(ascii: "}") { return }
            guard next == UInt8(ascii: ",") else { throw malformed("',' or '}'") }
        }
    }

    /// True, having read it, when the next value is `null`.
    mutating func null() -> Bool {
        skipSpace()
        guard bytes[index...].starts(with: "null".utf8) else { return false }
        index += 4
        return true
    }

    public mutating func string() throws -> String {
        try expect(UInt8(ascii: "\""))
        let start = index
        // Most strings have no escape: their bytes are the text.
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
            guard bytes[index] >= 0x20 else { throw malformed("no control character in a string") }
            index += 1
        }
        guard index < bytes.count else { throw malformed("'\"'") }
        if bytes[index] == UInt8(ascii: "\"") {
            index += 1
            return String(decoding: bytes[start..<(index - 1)], as: UTF8.self)
        }
        var text = Array(bytes[start..<index])
        while true {
            guard index < bytes.count else { throw malformed("'\"'") }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return String(decoding: text, as: UTF8.self)
            case UInt8(ascii: "\\"): try escape(into: &text)
            case ..<0x20: throw malformed("no control character in a string")
            default: text.append(byte)
            }
        }
    }

    /// An integer (no fraction or exponent) that fits an Int.
    mutating func integer() throws -> Int {
        skipSpace()
        let start = index
        guard scan({ $0.number() }), let value = Int(String(decoding: bytes[start..<index], as: UTF8.self)) else {
            throw malformed("an integer")
        }
        return value
    }

    /// The next value if it is a string; any other value is read past, and nil.
    public mutating func optionalString() throws -> String? {
        skipSpace()
        guard peek() == UInt8(ascii: "\"") else {
            try skipValue()
            return nil
        }
        return try string()
    }

    /// Reads past one value of any kind (nesting at most `JSONSyntax.maxDepth` deep).
    public mutating func skipValue() throws {
        skipSpace()
        guard scan({ $0.value(depth: 0) }) else { throw malformed("a JSON value") }
    }

    /// Runs `JSONSyntax`'s scanner from here, and moves on to where it stopped.
    private mutating func scan(_ step: (inout JSONSyntax.Scanner) -> Bool) -> Bool {
        let (ok, end) = bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONSyntax.Scanner(bytes: buffer)
            scanner.index = index
            return (step(&scanner), scanner.index)
        }
        index = end
        return ok
    }

    private mutating func escape(into text: inout [UInt8]) throws {
        guard let byte = peek() else { throw malformed("an escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(byte)
        case UInt8(ascii: "b"): text.append(0x08)
        case UInt8(ascii: "f"): text.append(0x0C)
        case UInt8(ascii: "n"): text.append(0x0A)
        case UInt8(ascii: "r"): text.append(0x0D)
        case UInt8(ascii: "t"): text.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800..<0xDC00).contains(scalar) {
                // A high surrogate needs its low one, as \uXXXX right after.
                guard bytes[index...].starts(with: "\\u".utf8) else { throw malformed("a low surrogate") }
                index += 2
                let low = try hex4()
                guard (0xDC00..<0xE000).contains(low) else { throw malformed("a low surrogate") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw malformed("a Unicode scalar") }
            text.append(contentsOf: String(Character(unicode)).utf8)
        default: throw malformed("an escape")
        }
    }

    private mutating func hex4() throws -> UInt32 {
        var value: UInt32?
        _ = scan { scanner in
            value = scanner.hex4()
            return value != nil
        }
        guard let value else { throw malformed("four hex digits") }
        return value
    }

    private mutating func expect(_ byte: UInt8) throws {
        skipSpace()
        guard peek() == byte else { throw malformed("'\(Character(Unicode.Scalar(byte)))'") }
        index += 1
    }

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipSpace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private func malformed(_ expected: String) -> Malformed { Malformed(offset: index, expected: expected) }
}
