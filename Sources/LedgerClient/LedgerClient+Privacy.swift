import Foundation

// Erasure and access for a data subject's requests (SPEC "Personal data and erasure"): for an
// app's privacy tooling, signed in with a token that carries the role `privacy`.
extension LedgerClient {
    /// Erases `account`'s personal data: its pseudonym mapping and the plaintexts and openings of
    /// its values. Every proof stays valid; reads show the account as `erased:<pseudonym>`.
    /// Repeating it answers the first erasure; an unknown account throws `.notFound`.
    public func erasePersonalData(account: String, reason: String) async throws -> Erasure {
        try await send("POST", "/v1/privacy/erasures", body: ErasureRequest(account: account, reason: reason))
    }

    /// Every personal value held for `account`, with the positions of the events referencing it.
    public func exportPersonalData(account: String) async throws -> PersonalDataExport {
        try await send("GET", "/v1/privacy/export", query: ["account": account])
    }
}
