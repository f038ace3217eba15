import LedgerPostgres
import Logging
import PostgresNIO

/// Where the log's privacy format starts (`ledger_privacy_format`): events before
/// `pseudonyms_from` (Migrations/sql/0017) name accounts in plaintext, and events before
/// `free_texts_from` (0020) may hold a client's free texts in plaintext; they keep them for ever.
public struct PrivacyFormat: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The positions of events that predate the format, or nil when the log has none.
    public func plaintextPositions() async throws -> ClosedRange<Int64>? {
        try await client.queryUnlessClosed(
            """
            SELECT greatest(f.pseudonyms_from, f.free_texts_from), h.position FROM ledger_privacy_format f, ledger_head h
            """, logger: logger
        ) { rows in
            for try await (from, head) in rows.decode((Int64, Int64).self) {
                let last = min(from - 1, head)
                return last >= 1 ? 1...last : nil
            }
            return nil
        }
    }

    /// Why `LEDGER_PUBLIC_ENTRIES=yes` must be refused on this log (public entry bundles would
    /// publish the plaintext of the events before the format), naming the positions; nil when
    /// every event is in the format.
    public func publicEntriesRefusal() async throws -> String? {
        guard let positions = try await plaintextPositions() else { return nil }
        return "refusing to start: LEDGER_PUBLIC_ENTRIES=yes would publish events \(positions.lowerBound)…\(positions.upperBound), "
            + "appended before pseudonyms and commitments with personal data or free texts in plaintext; leave entry bundles to auditors (unset it)"
    }
}
