import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerWire
import Logging
import PostgresNIO

/// Erasure and access (SPEC "Personal data and erasure"; GDPR Art. 17, 15 and 20) over the
/// erasable tables of Migrations/sql/0017.
///
/// **Erasure** is one transaction: the subject's values deleted (plaintexts and openings); then,
/// under the log's head lock, any value an append kept meanwhile and the subject (the mapping)
/// deleted, and `PersonalDataErased` appended (through `ledger_append`: the chain). Whatever races
/// with it leaves no plaintext behind: values are kept only by appends, under the head lock, and
/// only for subjects that still exist (`ledger_keep_values`); a proof decided meanwhile is refused
/// at its commit (the subject is gone) and decided again under a new one. Then the erasable
/// tables are vacuumed, so the deleted rows leave their files at once.
///
/// **Nothing links the person back** (Migrations/sql/0020): no record of the erasure is kept
/// beside the account or anything derived from it (no hash, no keyed hash), and the answer never
/// names the pseudonym. So a repeat cannot get the first answer: it finds nothing held and says
/// so (`Erasure.notHeld`), as for an account never known. Nothing here logs the account.
public struct PrivacyOffice: Sendable {
    let client: PostgresClient
    let logger: Logger
    public static let stream = "privacy"
    /// The advisory lock class of erasures (with a hash of the account as the second key, held
    /// for the transaction only): "PRIV".
    static let lockKey: Int32 = 0x5052_4956

    public init(store: EventStore) {
        self.client = store.client
        self.logger = store.logger
    }

    /// Erases `account`: the first time, its values and mapping; after that (or for an account
    /// never known), nothing, answered `held: false`. A reason other than a short reference is
    /// refused (400 `invalid_value`): it enters the log for ever.
    public func erase(account: String, reason: String, requester: String) async throws -> Erasure {
        guard ErasureRequest.isValidReason(reason) else { throw DomainError.invalid(ErasureRequest.reasonRule, code: .invalidValue) }
        let requester = try await Subjects(client: client, logger: logger).pseudonym(for: requester)
        let erasure = try await client.transaction(logger: logger) { connection -> Erasure in
            // Erasures of one account one at a time (a repeat waits, then finds nothing held).
            try await connection.queryUnlessClosed("SELECT pg_advisory_xact_lock(\(Self.lockKey), hashtext(\(account)))", logger: logger)
            guard
                let pseudonym = try await Self.text(
                    connection.queryUnlessClosed("SELECT pseudonym FROM ledger_subjects WHERE account = \(account)", logger: logger))
            else {
                let unerased = try await Self.legacyPositions(account, connection, logger)
                return Erasure.notHeld(unerasedPositions: unerased)
            }
            // The bulk of the work before the head lock, so appends wait only for the end of it.
            var kinds: [String: Int] = [:]
            let deleteValues: PostgresQuery = "DELETE FROM ledger_personal_values WHERE pseudonym = \(pseudonym) RETURNING kind"
            for try await kind in try await connection.queryUnlessClosed(deleteValues, logger: logger).decode(String.self) {
                kinds[kind, default: 0] += 1
            }
            // Events keeping a value in plaintext: named, not claimed erased.
            let legacy = try await Self.legacyPositions(account, connection, logger)
            let plaintext = try await Self.plaintextStarts(pseudonym, connection, logger)
            let unerased = Set(legacy + plaintext).sorted()
            // Under the head lock no append keeps values: those kept since go now, with the subject.
            try await connection.queryUnlessClosed("SELECT ledger_lock_head()", logger: logger)
            for try await kind in try await connection.queryUnlessClosed(deleteValues, logger: logger).decode(String.self) {
                kinds[kind, default: 0] += 1
            }
            try await connection.queryUnlessClosed("DELETE FROM ledger_subjects WHERE pseudonym = \(pseudonym)", logger: logger)
            // The account's webhooks go with it (the table names it by its pseudonym).
            try await connection.queryUnlessClosed("DELETE FROM ledger_webhooks WHERE account = \(pseudonym)", logger: logger)
            let event = NewEvent(
                type: "PersonalDataErased",
                data: CanonicalJSON.encode(ErasedEvent(pseudonym: pseudonym, reason: reason, requester: requester)),
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
            return Erasure(
                erasedAt: RecordedTime.date(micros: micros), position: position,
                values: kinds.sorted { $0.key < $1.key }.map { Erasure.Value(kind: $0.key, count: $0.value) },
                unerasedPositions: unerased)
        }
        if erasure.held { await vacuum() }
        return erasure
    }

    /// `PersonalDataErased`'s data: the pseudonym erased, why (a short reference), by whom (their
    /// pseudonym). Nothing derived from the account: the log is public to auditors for ever.
    /// (Erasures before Migrations/sql/0020 also listed the commitments erased.)
    struct ErasedEvent: Codable {
        var pseudonym: String
        var reason: String
        var requester: String
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

    /// The subject's starts from between Migrations/sql/0017 and 0020, whose local identifier and
    /// share options' texts the event holds in plaintext (from the view: its owner index, and a
    /// start that old is in it).
    static func plaintextStarts(_ pseudonym: String, _ connection: PostgresConnection, _ logger: Logger) async throws -> [Int64] {
        var positions: [Int64] = []
        for try await position in try await connection.queryUnlessClosed(
            """
            SELECT started_position FROM proj_collaborations
            WHERE owner = \(pseudonym) AND local_identifier NOT LIKE 'commitment:%' ORDER BY 1
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
                   ARRAY(SELECT c.started_position FROM proj_collaborations c
                         WHERE c.owner = s.pseudonym
                           AND (v.commitment IN (c.title, c.initiator_handle, c.initiator_name, c.local_identifier)
                                OR strpos(c.share_options::text, v.commitment) > 0)
                         ORDER BY 1)
            FROM s JOIN ledger_personal_values v ON v.pseudonym = s.pseudonym
            """, logger: logger
        ) { rows in
            var export: PersonalDataExport?
            var values: [PersonalDataExport.Value] = []
            for try await (pseudonym, kind, value, commitment, positions) in rows.decode((String, String?, String?, String?, [Int64]).self)
            {
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

    /// The erased rows out of the tables' files now, not at autovacuum's next visit (the services
    /// own these tables for it; where a deployment's role does not, autovacuum does it soon).
    private func vacuum() async {
        for table in ["ledger_personal_values", "ledger_subjects"] {
            do {
                try await client.executeUnlessClosed(PostgresQuery(unsafeSQL: "VACUUM \(table)"), logger: logger)
            } catch {
                logger.warning(
                    "privacy: vacuuming after an erasure failed",
                    metadata: ["table": "\(table)", "error": "\(DatabaseFailure.describe(error))"])
            }
        }
    }

    static func text(_ rows: PostgresRowSequence) async throws -> String? {
        for try await text in rows.decode(String.self) { return text }
        return nil
    }
}
