import Foundation
import HTTPTypes
import LedgerConsole
import LedgerDomain
import LedgerTestSupport
import LedgerVerifier
import LedgerWire
import Logging
import PostgresNIO
import Testing
import TransparencyLog

@testable import LedgerAPI
@testable import LedgerLog
@testable import LedgerPostgres
@testable import LedgerStore

/// One way to throw: every error a target below the API can bring to a handler is answered
/// with its code of the catalogue, never a 500; the proof refusal reasons and the ledger's own
/// SQLSTATEs are typed and listed.
@Suite("Error catalogue")
struct ErrorCatalogueTests {
    /// Stands for anything unforeseen.
    struct Unforeseen: Error {}

    /// The error PostgreSQL raises for `sqlState`.
    static func raised(_ sqlState: String, on client: PostgresClient) async throws -> PSQLError {
        do {
            let raise = "DO $$ BEGIN RAISE EXCEPTION 'test' USING ERRCODE = '\(sqlState)'; END $$"
            try await client.query(PostgresQuery(unsafeSQL: raise))
        } catch let error as PSQLError {
            return error
        }
        Issue.record("no error raised for \(sqlState)")
        throw CancellationError()
    }

    /// What the error middleware answers for `error`: its refusal's code, nil for a 500.
    static func answered(_ error: any Error) -> ErrorCode? {
        guard let refusal = DomainError(answering: error) else { return nil }
        #expect(ErrorCode.served.contains(refusal.code) && refusal.code.status != 500, "\(error): \(refusal)")
        return refusal.code
    }

    @Test("each error type of the targets below the API is answered with its catalogue code, none with a 500")
    func lowerTargets() async throws {
        let known: [(any Error, ErrorCode)] = [
            (DomainError(.viewBehind, "the views are behind", retryAfter: 1), .viewBehind),
            (ProofRejection.invalidKey("public key is not a point on P-256"), .invalidPublicKey),
            (ProofRejection.invalidPath("no inclusion hashes"), .invalidInclusionPath),
            (ProofRejection.identityRemoved, .proofRejected),
            (StoreError.versionConflict(stream: "collaboration-x", expected: .noStream, actual: 1), .concurrentUpdate),
            (StoreError.idempotencyMismatch(eventId: UUID()), .idempotencyKeyReused),
            (Migrator.MigrationError(description: "applied migration 0001 was changed"), .notReady),
            (CheckpointError("the log ends at position 5, before 20; not signing"), .logUnavailable),
            (ConnectionClosed(), .databaseUnavailable),
            (DeadlineExceeded(operation: "a proof group", limit: .seconds(10)), .notAnswered),
        ]
        for (error, code) in known {
            #expect(Self.answered(error) == code, "\(error)")
        }
        let refused = try #require(DomainError(answering: ProofRejection.identityRemoved))
        #expect(refused.reason == .identityRemoved && refused.status == .forbidden)
        #expect(DomainError(answering: ConnectionClosed())?.retryAfter == 1)

        try await withTestStore { _, client, _ in
            // The database away (admin_shutdown): 503 with Retry-After.
            let away = try await Self.raised("57P01", on: client)
            #expect(Self.answered(away) == .databaseUnavailable && DomainError(answering: away)?.retryAfter == 1)
            // The ledger's own SQLSTATEs, typed; the engine retries them, past that a 409.
            for state in LedgerSQLState.allCases {
                let error = try await Self.raised(state.rawValue, on: client)
                #expect(LedgerSQLState(error) == state)
                #expect(Self.answered(error) == .concurrentUpdate, "\(state)")
            }
            // Any other database error is unexpected: a 500.
            let violation = try await Self.raised("23505", on: client)
            #expect(LedgerSQLState(violation) == nil && DomainError(answering: violation) == nil)
        }
        // A broken invariant and the unforeseen stay 500 `internal_error`.
        #expect(DomainError(answering: StoreError.invalidRequest("no events")) == nil)
        #expect(DomainError(answering: Unforeseen()) == nil)
    }

    @Test("the proof refusal reasons are the catalogue's, each documented; the checks' messages begin with them")
    func refusalReasons() throws {
        let text = OpenAPIDocument.text
        let enumLine = try #require(
            text.split(separator: "\n").first { $0.hasPrefix("              enum: [invalid_public_key") })
        let documented = enumLine.drop { $0 != "[" }.dropFirst().dropLast().split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        #expect(documented == ProofRefusalReason.allCases.map(\.rawValue))
        for reason in ProofRefusalReason.allCases {
            #expect(text.contains("- `\(reason.rawValue)`: \(reason.meaning)\n"), "\(reason.rawValue)")
            #expect(reason.message == "\(reason.rawValue): \(reason.meaning)")
        }
        let rejections: [ProofRejection] = [
            .invalidKey("k"), .invalidPath("p"), .badSignature, .unknownIdentity, .identityRemoved, .identityClaimed, .accessNotYetValid,
            .accessExpired,
            .challengeUnknown, .challengeExpired, .challengeUsed, .challengeWrongAccount, .challengeWrongCollaboration,
        ]
        for rejection in rejections {
            #expect(rejection.description.hasPrefix(rejection.reason.rawValue + ": "), "\(rejection)")
        }
        // Every reason but the erasure's (refused without a verdict event) is a check's.
        #expect(Set(rejections.map(\.reason)).union([.accountErased]) == Set(ProofRefusalReason.allCases))
    }

    @Test("every custom SQLSTATE the migrations raise is a LedgerSQLState, and each one is raised")
    func sqlStates() throws {
        let migrations = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Migrations")
        let files = try #require(FileManager.default.enumerator(at: migrations, includingPropertiesForKeys: nil))
        var raised = Set<String>()
        for case let url as URL in files where url.pathExtension == "sql" {
            let sql = try String(contentsOf: url, encoding: .utf8)
            for raise in sql.components(separatedBy: "ERRCODE = '").dropFirst() where raise.hasPrefix("LP") {
                raised.insert(String(raise.prefix(5)))
            }
        }
        #expect(raised == Set(LedgerSQLState.allCases.map(\.rawValue)))
    }

    @Test("a tile the stored log cannot make (cut below its checkpoint): 503 log_unavailable, not 500")
    func tileOfACutLog() async throws {
        let signer = try NoteSigner(name: "catalogue.test/ledger")
        try await LiveServer.run(signer: signer) { api in
            let store = EventStore(client: api.db, logger: Logger(label: "catalogue-test"))
            _ = try await store.append(
                .init(streamId: "cut-\(UUID())", expectedVersion: .noStream, events: (0..<20).map { event("Cut", $0) }))
            try await waitUntil(timeout: .seconds(30), "a published checkpoint of the 20 events") {
                let note = try await api.call(.get, "/tlog/checkpoint")
                return note.status == .ok && (try? Checkpoint.open(note.raw, verifier: signer.verifier).size) == 20
            }
            // A superuser (or a restore from an older backup) cuts the events below the published 20.
            try await truncateLog(api.db, to: 5, keepingCheckpoints: true)
            let hashes = try await api.call(.get, "/tlog/" + Tile(level: 0, index: 0, width: 20).path)
            #expect(hashes.status == .serviceUnavailable && hashes.body.errorCode == "log_unavailable", "\(hashes.raw)")
            let entries = "/tlog/" + Tile(level: nil, index: 0, width: 20).path
            let bundle = try await api.call(.get, entries, as: "a", roles: ["auditor"])
            #expect(bundle.status == .serviceUnavailable && bundle.body.errorCode == "log_unavailable", "\(bundle.raw)")
            // What the stored log still holds is served as before.
            #expect(try await api.call(.get, "/tlog/checkpoint").status == .ok)
        }
    }
}
