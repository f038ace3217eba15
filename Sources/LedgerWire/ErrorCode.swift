/// Every error code the API answers with, its HTTP status and what it means: the one catalogue
/// the server's errors, the OpenAPI document (`ErrorBody.code`, checked by a test) and the SDK's
/// `LedgerError.Code` draw from.
public enum ErrorCode: String, CaseIterable, Sendable, Codable {
    // 400: the request itself is wrong; nothing was changed.
    case invalidRequest = "invalid_request"
    case malformedJSON = "malformed_json"
    case missingField = "missing_field"
    case wrongType = "wrong_type"
    case invalidValue = "invalid_value"
    case invalidBase64 = "invalid_base64"
    case invalidLength = "invalid_length"
    case invalidQuery = "invalid_query"
    case invalidCursor = "invalid_cursor"
    case invalidShareOptions = "invalid_share_options"
    case invalidHighlight = "invalid_highlight"
    case conflictingIdentities = "conflicting_identities"
    case invalidWindow = "invalid_window"
    case invalidIdempotencyKey = "invalid_idempotency_key"
    case invalidPublicKey = "invalid_public_key"
    case invalidInclusionPath = "invalid_inclusion_path"
    case invalidSignatureEncoding = "invalid_signature_encoding"
    case invalidWebhookURL = "invalid_webhook_url"
    case httpError = "http_error"
    // 401
    case unauthorized
    case invalidToken = "invalid_token"
    case reservedAccount = "reserved_account"
    // 403
    case notOwner = "not_owner"
    case notOwnerOrAuditor = "not_owner_or_auditor"
    case notAuditor = "not_auditor"
    case noAccess = "no_access"
    case notPrivacyOfficer = "not_privacy_officer"
    case proofRejected = "proof_rejected"
    // 404
    case notFound = "not_found"
    case routeNotFound = "route_not_found"
    case noCheckpoint = "no_checkpoint"
    // 405, 409, 413, 422, 429
    case methodNotAllowed = "method_not_allowed"
    case concurrentUpdate = "concurrent_update"
    case tooManyWebhooks = "too_many_webhooks"
    case payloadTooLarge = "payload_too_large"
    case idempotencyKeyReused = "idempotency_key_reused"
    case unknownIdentity = "unknown_identity"
    case tooManyRejections = "too_many_rejections"
    // 500, 503
    case internalError = "internal_error"
    case databaseUnavailable = "database_unavailable"
    case viewBehind = "view_behind"
    case notAnswered = "not_answered"
    case notCheckpointed = "not_checkpointed"
    case logUnavailable = "log_unavailable"
    case shuttingDown = "shutting_down"
    case notReady = "not_ready"
    case cutShort = "cut_short"
    // 501
    case notAcrossShards = "not_across_shards"
    /// The SDK's name for a code this version does not know; the server never sends it.
    case unknown

    /// The HTTP status the API answers this code with (0 for `unknown`).
    public var status: Int {
        switch self {
        case .invalidRequest, .malformedJSON, .missingField, .wrongType, .invalidValue, .invalidBase64, .invalidLength, .invalidQuery,
            .invalidCursor, .invalidShareOptions, .invalidHighlight, .conflictingIdentities, .invalidWindow, .invalidIdempotencyKey,
            .invalidPublicKey, .invalidInclusionPath, .invalidSignatureEncoding, .invalidWebhookURL, .httpError:
            400
        case .unauthorized, .invalidToken, .reservedAccount: 401
        case .notOwner, .notOwnerOrAuditor, .notAuditor, .noAccess, .notPrivacyOfficer, .proofRejected: 403
        case .notFound, .routeNotFound, .noCheckpoint: 404
        case .methodNotAllowed: 405
        case .concurrentUpdate, .tooManyWebhooks: 409
        case .payloadTooLarge: 413
        case .idempotencyKeyReused, .unknownIdentity: 422
        case .tooManyRejections: 429
        case .internalError: 500
        case .databaseUnavailable, .viewBehind, .notAnswered, .notCheckpointed, .logUnavailable, .shuttingDown, .notReady, .cutShort: 503
        case .notAcrossShards: 501
        case .unknown: 0
        }
    }

    /// What the code means, for the OpenAPI document and `ledger` users.
    public var meaning: String {
        switch self {
        case .invalidRequest: "the request is malformed or out of range"
        case .malformedJSON: "the body is not JSON, or is empty"
        case .missingField: "a required field is missing or empty"
        case .wrongType: "a field has the wrong JSON type, or is null"
        case .invalidValue: "a field's value is not acceptable (an id that is not a UUID, a negative number)"
        case .invalidBase64: "a binary field is not standard base64"
        case .invalidLength: "a binary field has the wrong number of bytes"
        case .invalidQuery: "a query parameter or header is malformed or out of range"
        case .invalidCursor: "the cursor was not issued for this list (or was altered)"
        case .invalidShareOptions: "share options break a rule (a picker needs exactly one selection, ids are unique)"
        case .invalidHighlight: "a highlight's kind, trigger or mentioned identity do not go together"
        case .conflictingIdentities: "an identity is both added and removed in one update, or its window is also set (or set twice)"
        case .invalidWindow:
            "an access window or default access is not acceptable (a bound outside the years 1 to 9999, notBefore not before notAfter, a duration that is not ISO 8601 or not between 1 second and 100 years)"
        case .invalidIdempotencyKey: "the Idempotency-Key header is empty or longer than 255 characters"
        case .invalidPublicKey: "the proof's key is not a 65-byte uncompressed P-256 point"
        case .invalidInclusionPath: "the proof's inclusion hashes or key index are malformed"
        case .invalidSignatureEncoding: "the signature is neither DER nor 64 raw bytes"
        case .invalidWebhookURL: "the webhook URL is not an absolute https URL without credentials, or its host is not a public address"
        case .httpError: "the HTTP layer refused the request"
        case .unauthorized: "no bearer token was sent"
        case .invalidToken: "the bearer token was refused (the message says why)"
        case .reservedAccount: "the token's account begins with psn- or erased: (any case), the namespace of pseudonyms"
        case .notOwner: "only the collaboration's owner may do this"
        case .notOwnerOrAuditor: "only the owner or an auditor may read this"
        case .notAuditor: "only an auditor may read this"
        case .noAccess: "the caller has no access to this collaboration"
        case .notPrivacyOfficer: "only a caller with the role privacy may erase or export personal data"
        case .proofRejected: "the identity proof was refused; `reason` says why, and the refusal is recorded"
        case .notFound: "no such collaboration, event, checkpoint, request or account"
        case .routeNotFound: "no such endpoint"
        case .noCheckpoint: "no checkpoint has been published yet"
        case .methodNotAllowed: "the endpoint exists but not with this method (see Allow)"
        case .concurrentUpdate: "the collaboration changed under every attempt; retry"
        case .tooManyWebhooks: "the account holds the most webhooks it may"
        case .payloadTooLarge: "the body is over the limit"
        case .idempotencyKeyReused: "this Idempotency-Key was used for a different request"
        case .unknownIdentity: "the mentioned identity, or one whose window is set, is not a current participant"
        case .tooManyRejections: "too many refused proofs from this account; retry after Retry-After"
        case .internalError: "an unexpected server error (logged)"
        case .databaseUnavailable: "the database is unavailable for the moment; retry after Retry-After"
        case .viewBehind: "the views have not reached minPosition yet; retry after Retry-After"
        case .notAnswered: "the request was not answered in time (it may still take effect); retry"
        case .notCheckpointed: "no published checkpoint covers the event yet; retry shortly"
        case .logUnavailable:
            "the stored log cannot serve this part of its published tree (events or tree nodes missing, an entry too large for a bundle); logged for the operator"
        case .shuttingDown: "this instance is shutting down; send requests to another"
        case .notReady: "the database is unreachable or its schema is behind"
        case .cutShort:
            "a write of every shard was done on some shards only (a shard unavailable, or failing midway): `shards` says what each did; retry after Retry-After to finish it"
        case .notAcrossShards: "the endpoint reads or writes every shard, which a ledger on several shards does not serve yet"
        case .unknown: "a code this version of the SDK does not know"
        }
    }

    /// The codes the server sends (every one but `unknown`).
    public static var served: [ErrorCode] { allCases.filter { $0 != .unknown } }
}
