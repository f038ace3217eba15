import Crypto
import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerWire
import Logging
import NIOCore
import PostgresNIO

/// Erasure and access (SPEC "Personal data and erasure"; GDPR Art. 17, 15 and 20) over the
/// erasable tables of Migrations/sql/0017.
///
/// **Erasure** is one transaction: the subject's values deleted (plaintexts and openings); then,
/// under the log's head lock, any value an append kept meanwhile and the subject (the mapping)
/// deleted, `PersonalDataErased` appended (through `ledger_append`: the chain), and the answer kept
/// under a keyed hash of the account, so a repeated request gets the first answer and no table
/// keeps the account itself. Whatever races with it leaves no plaintext behind: values are kept
/// only by appends, under the head lock, and only for subjects that still exist
/// (`ledger_keep_values`); a proof decided meanwhile is refused at its commit (the subject is gone)
/// and decided again under a new one. Then the erasable tables are vacuumed, so the deleted rows
/// leave their files at once.
public struct PrivacyOffice: Sendable {
    let client: PostgresClient
    let logger: Logger
    public static let stream = "privacy"
    /// The advisory lock class of erasures (with the account's hash as the second key): "PRIV".
    static let lockKey: Int32 = 0x5052_4956

    public init(store: EventStore) {
        self.client = store.client
        self.logger = store.logger
    }

    /// Erases `account` (throws 404 when no subject of that name exists or ever was erased).
    public func erase(account: String, reason: String, requester: String) async throws -> Erasure {
        let requester = try await Subjects(client: client, logger: logger).pseudonym(for: requester)
        let key = try await self.key()
        let accountHash = Array(HMAC<SHA256>.authenticationCode(for: Array(account.utf8), using: key))
        let erasure = try await client.transaction(logger: logger) { connection -> Erasure in
            // Erasures of one account one at a time (a repeat then finds the first one's answer).
            try await connection.queryUnlessClosed("SELECT pg_advisory_xact_lock(\(Self.lockKey), hashtext(\(account)))", logger: logger)
            guard let pseudonym = try await Self.text(
                connection.queryUnlessClosed("SELECT pseudonym FROM ledger_subjects WHERE account = \(account)", logger: logger))
            else {
                // Erased before: the first answer, if this is the account erased.
                let rows = try await connection.queryUnlessClosed(
                    "SELECT answer FROM ledger_erasures WHERE account_hash = \(ByteBuffer(bytes: accountHash))", logger: logger)
                guard let answer = try await Self.text(rows) else {
                    throw DomainError(.notFound, "no personal data is held for this account")
                }
                var first = try APIJSON.decoder().decode(Erasure.self, from: Data(answer.utf8))
                first.account = account
                return first
            }
            // The bulk of the work before the head lock, so appends wait only for the end of it.
            var values: [Erasure.Value] = []
            let deleteValues: PostgresQuery = "DELETE FROM ledger_personal_values WHERE pseudonym = \(pseudonym) RETURNING kind, commitment"
            for try await (kind, commitment) in try await connection.queryUnlessClosed(deleteValues, logger: logger)
                .decode((String, String).self) { values.append(Erasure.Value(kind: kind, commitment: commitment)) }
            let unerased = try await Self.legacyPositions(account, connection, logger)
            // Under the head lock no append keeps values: those kept since go now, with the subject.
            try await connection.queryUnlessClosed("SELECT ledger_lock_head()", logger: logger)
            for try await (kind, commitment) in try await connection.queryUnlessClosed(deleteValues, logger: logger)
                .decode((String, String).self) { values.append(Erasure.Value(kind: kind, commitment: commitment)) }
            values.sort { $0.commitment < $1.commitment }
            try await connection.queryUnlessClosed("DELETE FROM ledger_subjects WHERE pseudonym = \(pseudonym)", logger: logger)
            // The account's webhooks go with it (the table names it by its pseudonym).
            try await connection.queryUnlessClosed("DELETE FROM ledger_webhooks WHERE account = \(pseudonym)", logger: logger)
            let event = NewEvent(
                type: "PersonalDataErased",
                data: CanonicalJSON.encode(ErasedEvent(pseudonym: pseudonym, reason: reason, requester: requester, values: values.map(\.commitment))),
                metadata: EventMetadata(actor: requester).json())
            let appended = try await connection.queryUnlessClosed(
                """
                SELECT outcome, first_position, (extract(epoch FROM now()) * 1000000)::int8
                FROM ledger_append(ARRAY[\(Self.stream)], ARRAY[-1::int8], ARRAY[''], ARRAY[1], ARRAY[\(event.eventId)],
                                   ARRAY[\(event.type)], ARRAY[\(event.data)], ARRAY[\(event.metadata)])
                """, logger: logger)
            var appendedAt: (position: Int64, micros: Int64)?
            for try await (outcome, position, micros) in appended.decode((String, Int64?, Int64).self) where outcome == "ok" {
                appendedAt = position.map { ($0, micros) }
            }
            guard let (position, micros) = appendedAt else { throw StoreError.invalidRequest("the erasure's event was not appended") }
            // Kept without the account: a repeat names it.
            let answer = Erasure(
                account: "", pseudonym: pseudonym, erasedAt: Date(timeIntervalSince1970: Double(micros) / 1_000_000),
                position: position, values: values, unerasedPositions: unerased)
            let kept = String(decoding: try APIJSON.encoder().encode(answer), as: UTF8.self)
            try await connection.queryUnlessClosed(
                """
                INSERT INTO ledger_erasures (account_hash, pseudonym, answer) VALUES (\(ByteBuffer(bytes: accountHash)), \(pseudonym), \(kept))
                """, logger: logger)
            // Answered as a repeat will be: from the text kept (a time through JSON is microseconds).
            var first = try APIJSON.decoder().decode(Erasure.self, from: Data(kept.utf8))
            first.account = account
            return first
        }
        await vacuum()
        return erasure
    }

    /// `PersonalDataErased`'s data: the pseudonym erased, why, by whom (their pseudonym), and
    /// the commitments no one can open any more.
    struct ErasedEvent: Codable {
        var pseudonym: String
        var reason: String
        var requester: String
        var values: [String]
    }

    /// Events before the format (`ledger_privacy_format`) naming the account in plaintext.
    static func legacyPositions(_ account: String, _ connection: PostgresConnection, _ logger: Logger) async throws -> [Int64] {
        var positions: [Int64] = []
        for try await position in try await connection.queryUnlessClosed(
            """
            SELECT e.position FROM ledger_events e, ledger_privacy_format f
            WHERE e.position < f.pseudonyms_from
              AND (e.data->>'owner' = \(account) OR e.data->>'account' = \(account) OR e.metadata->>'actor' = \(account))
            ORDER BY e.position
            """, logger: logger
        ).decode(Int64.self) { positions.append(position) }
        return positions
    }

    /// Every personal value held for `account`, and the positions of the events naming it (by
    /// its pseudonym, or in plaintext before the format); 404 when none is held. The events are
    /// read whole (no index names an actor): an access request is rare, and answered in seconds
    /// on a log of millions.
    public func export(account: String) async throws -> PersonalDataExport {
        try await client.queryUnlessClosed(
            """
            WITH s AS (SELECT pseudonym FROM ledger_subjects WHERE account = \(account))
            SELECT s.pseudonym, NULL::text, NULL::text, NULL::text,
                   ARRAY(SELECT e.position FROM ledger_events e
                         WHERE e.metadata->>'actor' IN (s.pseudonym, \(account)) OR e.data->>'owner' IN (s.pseudonym, \(account))
                            OR e.data->>'account' IN (s.pseudonym, \(account)) OR e.data->>'requester' = s.pseudonym
                         ORDER BY e.position)
            FROM s
            UNION ALL
            SELECT s.pseudonym, v.kind, v.value, v.commitment,
                   ARRAY(SELECT started_position FROM proj_collaborations
                         WHERE v.commitment IN (title, initiator_handle, initiator_name) ORDER BY 1)
            FROM s JOIN ledger_personal_values v ON v.pseudonym = s.pseudonym
            """, logger: logger
        ) { rows in
            var export: PersonalDataExport?
            var values: [PersonalDataExport.Value] = []
            for try await (pseudonym, kind, value, commitment, positions) in rows.decode((String, String?, String?, String?, [Int64]).self) {
                if let kind, let value, let commitment {
                    values.append(.init(kind: kind, value: value, commitment: commitment, positions: positions))
                } else {
                    export = PersonalDataExport(account: account, pseudonym: pseudonym, values: [], positions: positions)
                }
            }
            guard var export else { throw DomainError(.notFound, "no personal data is held for this account") }
            export.values = values.sorted { ($0.positions.first ?? 0, $0.kind) < ($1.positions.first ?? 0, $1.kind) }
            return export
        }
    }

    /// The key of the erasures' account hashes.
    private func key() async throws -> SymmetricKey {
        try await client.queryUnlessClosed("SELECT key FROM ledger_privacy_key", logger: logger) { rows in
            for try await bytes in rows.decode(ByteBuffer.self) { return SymmetricKey(data: Array(buffer: bytes)) }
            throw StoreError.invalidRequest("ledger_privacy_key has no key: run migrations")
        }
    }

    /// The erased rows out of the tables' files now, not at autovacuum's next visit (the services
    /// own these tables for it; where a deployment's role does not, autovacuum does it soon).
    private func vacuum() async {
        for table in ["ledger_personal_values", "ledger_subjects"] {
            do {
                try await client.executeUnlessClosed(PostgresQuery(unsafeSQL: "VACUUM \(table)"), logger: logger)
            } catch {
                logger.warning("privacy: vacuuming after an erasure failed", metadata: ["table": "\(table)", "error": "\(error)"])
            }
        }
    }

    static func text(_ rows: PostgresRowSequence) async throws -> String? {
        for try await text in rows.decode(String.self) { return text }
        return nil
    }
}
