import Crypto
import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerWire
import Logging
import PostgresNIO
import Synchronization

/// The paging cursors of the list reads (`cursor`, `nextCursor`): opaque to clients, signed
/// with HMAC-SHA256 under the database's cursor key (`ledger_cursor_key`, shared by every API
/// process; each shard its own, a shard made by a move too: ShardMove), so a cursor a client
/// changed, or one of another list or database, is a 400 and never read.
///
/// A cursor carries the list it continues (kind and scope: a collaboration, or the audit's
/// filters), the log position the first page read at, and the last item's key. Every later
/// page reads at that position, so a page sequence neither skips nor repeats an item while
/// writes go on. The members' cursor carries the time their states are read as of, too (the
/// first page's now, or its `asOf`; none at a position), so every page of a walk answers as of
/// the same moment.
public final class PageCursors: Sendable {
    public enum Kind: String, Codable, Sendable { case members, history, highlights, audit, collaborations }

    public struct Cursor: Codable, Sendable, Equatable {
        public var kind: Kind
        public var scope: String
        public var position: Int64
        public var after: String
        /// Members: the time states are read as of, in microseconds since 1970 (absent: by the
        /// events only, as at a position, or a cursor from before windows).
        public var time: Int64?

        public init(kind: Kind, scope: String, position: Int64, after: String, time: Int64? = nil) {
            self.kind = kind
            self.scope = scope
            self.position = position
            self.after = after
            self.time = time
        }
    }

    /// Items in a page: `limit` defaults to 100, at most 1,000.
    public static let defaultLimit = 100
    public static let maxLimit = 1000

    let client: PostgresClient
    let logger: Logger
    private let key = Mutex<SymmetricKey?>(nil)

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// `cursor` as text: base64url(JSON) "." base64url(HMAC).
    public func encode(_ cursor: Cursor) async throws -> String {
        let payload = try JSONEncoder().encode(cursor)
        let mac = HMAC<SHA256>.authenticationCode(for: payload, using: try await signingKey())
        return Self.base64url(payload) + "." + Self.base64url(Data(mac))
    }

    /// The cursor, if `text` is one this database signed for this kind and scope; else a 400.
    public func decode(_ text: String, kind: Kind, scope: String) async throws -> Cursor {
        let refused = DomainError.invalid("cursor is not a cursor of this list; start again without one", code: .invalidCursor)
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard text.utf8.count <= 2048, parts.count == 2, let payload = Self.unbase64url(parts[0]), let mac = Self.unbase64url(parts[1])
        else { throw refused }
        guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: payload, using: try await signingKey()),
            let cursor = try? JSONDecoder().decode(Cursor.self, from: payload), cursor.kind == kind, cursor.scope == scope
        else { throw refused }
        return cursor
    }

    /// `decode`, for an optional cursor (nil: the first page).
    public func decode(_ text: String?, kind: Kind, scope: String) async throws -> Cursor? {
        guard let text else { return nil }
        return try await decode(text, kind: kind, scope: scope) as Cursor
    }

    private func signingKey() async throws -> SymmetricKey {
        if let key = key.withLock({ $0 }) { return key }
        let loaded = try await client.queryUnlessClosed("SELECT key FROM ledger_cursor_key", logger: logger) { rows in
            for try await bytes in rows.decode(ByteBuffer.self) { return SymmetricKey(data: Array(buffer: bytes)) }
            throw StoreError.invalidRequest("ledger_cursor_key has no key: run migrations")
        }
        key.withLock { $0 = loaded }
        return loaded
    }

    static func base64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func unbase64url(_ text: Substring) -> Data? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
