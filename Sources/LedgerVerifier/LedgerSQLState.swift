import PostgresNIO

/// The SQLSTATEs the ledger's own SQL raises (class `LP`), typed: matched here, never as
/// strings. All five come from `ledger_commit_proofs` (Migrations/functions/ledger_commit_proofs.sql), the proof
/// engine's commit: a premise of the group's decision moved between its read and its commit,
/// nothing was written, and `ProofEngine` reads and decides the group again. A group refused on
/// every attempt answers 409 `concurrent_update`, as the API's catalogue mapping also answers
/// one of these should it ever reach a handler.
public enum LedgerSQLState: String, CaseIterable, Sendable {
    /// A challenge a decision used was used or expired since the read.
    case challengeMoved = "LP001"
    /// A collaboration was appended to since the read (its verdicts' expected versions).
    case collaborationMoved = "LP002"
    /// A stored request was decided by another worker since the read.
    case requestDecided = "LP003"
    /// A request's subject (its account's pseudonym) was erased since the read.
    case subjectErased = "LP004"
    /// A grant would be recorded outside its window (it ended, or had not started, by the
    /// database's clock at the commit): decided again, at the new time.
    case grantOutsideWindow = "LP005"

    /// The ledger's SQLSTATE that `error` carries; nil for any other error.
    public init?(_ error: PSQLError) {
        guard let state = error.serverInfo?[.sqlState], let known = Self(rawValue: state) else { return nil }
        self = known
    }
}
