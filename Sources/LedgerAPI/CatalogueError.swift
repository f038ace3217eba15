import LedgerDomain
import LedgerLog
import LedgerPostgres
import LedgerStore
import LedgerVerifier
import LedgerWire
import PostgresNIO

/// An error with its entry in the catalogue (`ErrorCode`): the refusal the API answers for it.
///
/// `ErrorMiddleware` looks every error up here, so each error type of the targets below that
/// can reach a handler is mapped once, in this file. What is not (an event type or a verdict
/// this version did not write, `UnknownEventType`, `VerdictEventError`; anything unforeseen)
/// and an instance whose `refusal` is nil (a broken invariant, such as
/// `StoreError.invalidRequest`) is unexpected: logged, and answered 500 `internal_error`.
/// Errors of the targets below that no handler can meet (the checkpointer's `ForkRefusal`, the
/// witnesses', the embedded cluster's, the settings') are not mapped.
protocol CatalogueError: Error {
    /// What the API answers; nil for an instance that is no refusal but a broken invariant.
    var refusal: DomainError? { get }
}

extension DomainError {
    /// The catalogue's answer for `error`; nil when it is unexpected.
    init?(answering error: any Error) {
        guard let refusal = (error as? any CatalogueError)?.refusal else { return nil }
        self = refusal
    }

    fileprivate static let databaseUnavailable = DomainError(
        .databaseUnavailable, "the database is unavailable for the moment; retry", retryAfter: 1)
}

extension DomainError: CatalogueError {
    var refusal: DomainError? { self }
}

/// A malformed key or path is the request's fault (400, nothing recorded); any other reason is
/// the proof refused (403 `proof_rejected` with its reason).
extension ProofRejection: CatalogueError {
    var refusal: DomainError? {
        switch self {
        case .invalidKey: DomainError(.invalidPublicKey, description)
        case .invalidPath: DomainError(.invalidInclusionPath, description)
        default: DomainError(.proofRejected, description, reason: reason)
        }
    }
}

/// The database away for the moment (503, retry), or a premise of a proof group's commit that
/// moved (`LedgerSQLState`: the engine retries those; 409 should one ever get this far). Any
/// other database error is unexpected.
extension PSQLError: CatalogueError {
    var refusal: DomainError? {
        if meansDatabaseUnavailable { return DomainError.databaseUnavailable }
        if LedgerSQLState(self) != nil {
            return DomainError(.concurrentUpdate, "the collaboration changed under every attempt; retry")
        }
        return nil
    }
}

/// A query on a connection that closed: the database away, as with a lost connection.
extension ConnectionClosed: CatalogueError {
    var refusal: DomainError? { DomainError.databaseUnavailable }
}

/// A database step that did not finish in time (a proof group's, a decision's): it may still
/// take effect, as with a call the server gave up on (`AbandoningResponder`).
extension DeadlineExceeded: CatalogueError {
    var refusal: DomainError? { DomainError(.notAnswered, "the request was not answered in time; retry") }
}

/// A version conflict that outlasted its retries, or event ids already stored by another
/// request; `invalidRequest` is a broken invariant (a bug, or a schema behind).
extension StoreError: CatalogueError {
    var refusal: DomainError? {
        if isVersionConflict { return DomainError(.concurrentUpdate, "the collaboration changed concurrently; retry") }
        if isIdempotencyMismatch {
            return DomainError(.idempotencyKeyReused, "this Idempotency-Key was used for a different request")
        }
        return nil
    }
}

/// The database's schema is not the one this version runs on.
extension Migrator.MigrationError: CatalogueError {
    var refusal: DomainError? { DomainError(.notReady, description) }
}

/// The stored log cannot give what its published checkpoint covers (events or tree nodes
/// missing below the published size, an entry too large for a bundle). Its cause is logged
/// for the operator; the caller learns only that this part of the tree cannot be served.
extension CheckpointError: CatalogueError {
    var refusal: DomainError? {
        DomainError(
            .logUnavailable, "the stored log cannot serve this part of its published tree (logged for the operator)")
    }
}
