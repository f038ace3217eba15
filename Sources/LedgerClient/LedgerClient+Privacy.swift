import Foundation

// Erasure and access for a data subject's requests (SPEC "Personal data and erasure"): for an
// app's privacy tooling, signed in with a token that carries the role `privacy`.
extension LedgerClient {
    /// Erases `account`'s personal data: its pseudonym mapping and the plaintexts and openings of
    /// its values. Every proof stays valid; reads show the account as `erased:<pseudonym>`. The
    /// answer says when, at which position, and the kinds and counts of values erased, never the
    /// pseudonym. An account with nothing held (never known, or erased before) answers
    /// `held == false`, so a retry is safe. `reason` is a short reference such as a ticket id
    /// (`ErasureRequest.isValidReason`); anything else throws `.invalidValue` (400).
    public func erasePersonalData(account: String, reason: String) async throws -> Erasure {
        try await send("POST", "/v1/privacy/erasures", body: ErasureRequest(account: account, reason: reason))
    }

    /// Every personal value held for `account`, with the positions of the events referencing it.
    public func exportPersonalData(account: String) async throws -> PersonalDataExport {
        try await send("GET", "/v1/privacy/export", query: ["account": account])
    }
}
