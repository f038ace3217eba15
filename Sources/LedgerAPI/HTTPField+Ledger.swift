import HTTPTypes

/// Header names the API reads beyond HTTPTypes' own.
extension HTTPField.Name {
    /// A start's retry key (`POST /v1/collaborations`).
    public static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    /// Where a change feed resumes (`GET /v1/feed`, the SSE reconnection header).
    public static let lastEventID = HTTPField.Name("Last-Event-ID")!
}
