import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerWire
import Logging
import NIOCore
import PostgresNIO
import TransparencyLog

/// The subjects of personal data (Migrations/sql/0017): each account's pseudonym, the name the
/// events give it, and the values committed to under it (kept by the append that commits to
/// them, `AppendRequest.values`). An erasure deletes a subject and its values.
public struct Subjects: Sendable {
    let client: PostgresClient
    let logger: Logger
    /// Where a pseudonym is read: with the commands' reads when made from the store.
    let reads: CommandReads

    public init(client: PostgresClient, logger: Logger) {
        (self.client, self.logger, self.reads) = (client, logger, CommandReads(client: client, logger: logger))
    }

    public init(store: EventStore) {
        (self.client, self.logger, self.reads) = (store.client, store.logger, store.reads)
    }

    /// The account's pseudonym if it has one (a read: nothing is made).
    public func existing(_ account: String) async throws -> String? {
        try await client.queryUnlessClosed("SELECT pseudonym FROM ledger_subjects WHERE account = \(account)", logger: logger) { rows in
            for try await pseudonym in rows.decode(String.self) { return pseudonym }
            return nil
        }
    }

    /// The account's pseudonym, made on its first use (again after an erasure: a new subject).
    public func pseudonym(for account: String) async throws -> String {
        guard let subject = try await reads.read(.init(stream: nil, account: account)).subject else {
            throw StoreError.invalidRequest("no pseudonym for the account")
        }
        return subject
    }

    /// What reads may show of the pseudonyms and commitments `events` name (one statement).
    public func disclosure(for events: [RecordedEvent]) async throws -> Disclosure {
        let (pseudonyms, commitments) = Disclosure.references(events)
        return try await disclosure(pseudonyms: pseudonyms, commitments: commitments)
    }

    public func disclosure(pseudonyms: Set<String>, commitments: Set<String>) async throws -> Disclosure {
        guard !pseudonyms.isEmpty || !commitments.isEmpty else { return Disclosure() }
        return try await client.queryUnlessClosed(
            """
            SELECT pseudonym, account, true FROM ledger_subjects WHERE pseudonym = ANY(\(Array(pseudonyms)))
            UNION ALL
            SELECT commitment, value, false FROM ledger_personal_values WHERE commitment = ANY(\(Array(commitments)))
            """, logger: logger
        ) { rows in
            var disclosure = Disclosure()
            for try await (key, value, isAccount) in rows.decode((String, String, Bool).self) {
                if isAccount { disclosure.accounts[key] = value } else { disclosure.values[key] = value }
            }
            return disclosure
        }
    }

    /// The openings of `commitments` still kept: what evidence carries so an auditor can check
    /// each plaintext against its commitment.
    public func openings(_ commitments: [String]) async throws -> [Evidence.Opening] {
        guard !commitments.isEmpty else { return [] }
        return try await client.queryUnlessClosed(
            """
            SELECT commitment, value, opening FROM ledger_personal_values WHERE commitment = ANY(\(commitments)) ORDER BY commitment
            """, logger: logger
        ) { rows in
            var openings: [Evidence.Opening] = []
            for try await (commitment, value, opening) in rows.decode((String, String, ByteBuffer).self) {
                openings.append(Evidence.Opening(commitment: commitment, value: value, opening: Base64.encode(Array(buffer: opening))))
            }
            return openings
        }
    }
}
