import ArgumentParser
import Foundation
import LedgerDomain
import LedgerStore
import LedgerWire

/// A data subject's requests at the command line, on the database directly (the operator's
/// tool; apps use `POST /v1/privacy/erasures` and `GET /v1/privacy/export` with the role privacy).
struct Privacy: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Erase an account's personal data, or export what is held for it (SPEC \"Personal data and erasure\").",
        subcommands: [Erase.self, Export.self])

    struct Erase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: """
                Erase an account: its pseudonym mapping, plaintexts and openings; every proof stays valid. Prints the answer as JSON \
                ({"held":false} when nothing is held: never known, or erased before).
                """)
        @Option(help: "The account to erase.") var account: String
        @Option(help: "Why: a short reference such as a ticket id, ^[A-Za-z0-9._:/#-]{1,64}$ (kept in the PersonalDataErased event).")
        var reason: String
        @Option(help: "Who asks for it, recorded as the event's actor.") var requester: String = "operator"
        @OptionGroup var database: DatabaseOptions

        /// Refused before the database is opened, with the message the API gives.
        func validate() throws {
            guard ErasureRequest.isValidReason(reason) else { throw ValidationError(ErasureRequest.reasonRule) }
            guard !Caller.isReserved(requester) else {
                throw ValidationError("--requester \(requester) begins with psn- or erased:, the namespace of pseudonyms")
            }
        }

        func run() async throws {
            let (account, reason, requester) = (account, reason, requester)
            let erasure = try await Privacy.withOffice(database) { office in
                try await office.erase(account: account, reason: reason, requester: requester)
            }
            print(String(decoding: try APIJSON.encoder().encode(erasure), as: UTF8.self))
            if !erasure.unerasedPositions.isEmpty {
                FileHandle.standardError.write(
                    Data(
                        "note: events at \(erasure.unerasedPositions.map(String.init).joined(separator: ", ")) predate pseudonyms and keep the account in plaintext\n"
                            .utf8))
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every personal value held for an account, with the positions of the events that reference it, as JSON.")
        @Option(help: "The account.") var account: String
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let account = account
            let export = try await Privacy.withOffice(database) { office in try await office.export(account: account) }
            print(String(decoding: try APIJSON.encoder().encode(export), as: UTF8.self))
        }
    }

    static func withOffice<T: Sendable>(_ database: DatabaseOptions, _ body: @Sendable (PrivacyOffice) async throws -> T) async throws -> T
    {
        do {
            return try await database.withClient { client, logger in
                try await Migrator(client: client, logger: logger).ensureCurrent()
                return try await body(PrivacyOffice(store: EventStore(client: client, logger: logger)))
            }
        } catch let error as DomainError {
            throw ValidationError(error.message)
        }
    }
}
