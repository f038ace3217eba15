import HTTPTypes

/// Header names the API reads beyond HTTPTypes' own.
extension HTTPField.Name {
    /// A start's retry key (`POST /v1/collaborations`).
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
}
