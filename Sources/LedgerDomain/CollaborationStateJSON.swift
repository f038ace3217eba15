/// The inline state's JSON, written and read without Foundation's coders.
///
/// Every command reads its collaboration's state and writes the next one. The state holds every
/// identity, so on participant adds the two coders took about 40 % of the machine's CPU, growing
/// with the collaboration (issue 47, docs/BENCHMARKS.md).
///
/// - **Written** as `CanonicalJSON` writes it, byte for byte: keys in byte order, no spaces, `/`
///   unescaped, absent optionals left out. `CollaborationStateJSONTests` compares the two on
///   random states.
/// - **Read** from any JSON of the state's shape: spaces, any key order, every escape, `null` for
///   an absent optional, unknown keys skipped, as `JSONDecoder` reads it. PostgreSQL rewrites
///   states in migrations and erasures, and its text differs from ours.
public enum CollaborationStateJSON {
    public static func encode(_ state: CollaborationState) -> String {
        var out = Writer()
        out.open()
        out.key("collaborationId", first: true)
        out.string(state.collaborationId)
        if let access = state.defaultAccess {
            out.key("defaultAccess")
            out.open()
            out.key("duration", first: true)
            out.string(access.duration)
            out.close()
        }
        out.key("grants")
        out.object(state.grants) { out, rootHash in out.string(rootHash) }
        out.key("identities")
        out.object(state.identities) { out, identity in
            out.open()
            var first = true
            for (key, value) in [("account", identity.account), ("notAfter", identity.notAfter), ("notBefore", identity.notBefore)] {
                guard let value else { continue }
                out.key(key, first: first)
                out.string(value)
                first = false
            }
            out.key("status", first: first)
            out.string(identity.status.rawValue)
            if let windows = identity.windows {
                out.key("windows")
                out.bytes += String(windows).utf8
            }
            out.close()
        }
        out.key("owner")
        out.string(state.owner)
        out.key("title")
        out.string(state.title)
        out.close()
        return String(decoding: out.bytes, as: UTF8.self)
    }

    public static func decode(_ json: String) throws -> CollaborationState {
        var reader = JSONReader(json)
        var collaborationId: String?
        var owner: String?
        var title: String?
        var identities: [String: CollaborationState.Identity]?
        var grants: [String: String]?
        var defaultAccess: DefaultAccess?
        try reader.object { reader, key in
            switch key {
            case "collaborationId": collaborationId = try reader.string()
            case "owner": owner = try reader.string()
            case "title": title = try reader.string()
            case "grants":
                var read: [String: String] = [:]
                try reader.object { reader, account in read[account] = try reader.string() }
                grants = read
            case "identities":
                var read: [String: CollaborationState.Identity] = [:]
                try reader.object { reader, rootHash in read[rootHash] = try identity(&reader) }
                identities = read
            case "defaultAccess":
                guard !reader.null() else { break }
                var duration: String?
                try reader.object { reader, key in
                    if key == "duration" { duration = try reader.string() } else { try reader.skipValue() }
                }
                guard let duration else { throw Missing(key: "defaultAccess.duration") }
                defaultAccess = DefaultAccess(stored: duration)
            default: try reader.skipValue()
            }
        }
        try reader.end()
        guard let collaborationId else { throw Missing(key: "collaborationId") }
        guard let owner else { throw Missing(key: "owner") }
        guard let title else { throw Missing(key: "title") }
        guard let identities else { throw Missing(key: "identities") }
        guard let grants else { throw Missing(key: "grants") }
        return CollaborationState(
            collaborationId: collaborationId, owner: owner, title: title, identities: identities, grants: grants,
            defaultAccess: defaultAccess)
    }

    struct Missing: Error, CustomStringConvertible {
        var key: String
        var description: String { "a collaboration state without \(key)" }
    }

    private static func identity(_ reader: inout JSONReader) throws -> CollaborationState.Identity {
        var status: CollaborationState.IdentityStatus?
        var account: String?
        var notBefore: String?
        var notAfter: String?
        var windows: Int?
        func optional(_ reader: inout JSONReader) throws -> String? { reader.null() ? nil : try reader.string() }
        try reader.object { reader, key in
            switch key {
            case "status":
                let text = try reader.string()
                guard let value = CollaborationState.IdentityStatus(rawValue: text) else { throw Missing(key: "a known status (\(text))") }
                status = value
            case "account": account = try optional(&reader)
            case "notBefore": notBefore = try optional(&reader)
            case "notAfter": notAfter = try optional(&reader)
            case "windows": windows = reader.null() ? nil : try reader.integer()
            default: try reader.skipValue()
            }
        }
        guard let status else { throw Missing(key: "an identity's status") }
        var identity = CollaborationState.Identity(status: status, account: account, windows: windows)
        (identity.notBefore, identity.notAfter) = (notBefore, notAfter)
        return identity
    }

    /// The bytes written so far, and how each part of the state is written.
    struct Writer {
        var bytes: [UInt8] = []

        mutating func open() { bytes.append(UInt8(ascii: "{")) }
        mutating func close() { bytes.append(UInt8(ascii: "}")) }

        mutating func key(_ key: String, first: Bool = false) {
            if !first { bytes.append(UInt8(ascii: ",")) }
            string(key)
            bytes.append(UInt8(ascii: ":"))
        }

        /// An object of `values`, its keys in byte order as `JSONEncoder`'s `.sortedKeys` has them.
        mutating func object<Value>(_ values: [String: Value], _ write: (inout Writer, Value) -> Void) {
            open()
            for (index, key) in values.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
                self.key(key, first: index == 0)
                write(&self, values[key]!)
            }
            close()
        }

        /// Escaped as `JSONEncoder` escapes: `"` and `\`, the five short control escapes, other
        /// control characters as `\u00xx`; everything else, `/` and non-ASCII included, as is.
        mutating func string(_ text: String) {
            bytes.append(UInt8(ascii: "\""))
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), byte]
                case 0x08: bytes += Array("\\b".utf8)
                case 0x09: bytes += Array("\\t".utf8)
                case 0x0A: bytes += Array("\\n".utf8)
                case 0x0C: bytes += Array("\\f".utf8)
                case 0x0D: bytes += Array("\\r".utf8)
                case ..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    bytes += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
                default: bytes.append(byte)
                }
            }
            bytes.append(UInt8(ascii: "\""))
        }
    }
}
