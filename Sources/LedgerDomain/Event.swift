import Foundation

/// An event about to be appended: the caller chooses its id so a retried append is recognised.
public struct NewEvent: Sendable, Hashable {
    public var eventId: UUID
    public var type: String
    /// The event's JSON payload, stored byte for byte as given.
    public var data: String
    /// JSON metadata (actor, causation, correlation and request ids), stored byte for byte.
    public var metadata: String

    /// `eventId` defaults to a time-ordered UUID (`Identifiers.timeOrderedUUID`): the log's
    /// unique index on event ids then grows at its right edge. Give one (any UUID) to make the
    /// append idempotent: a retry with the same ids is not stored twice.
    public init(eventId: UUID = Identifiers.timeOrderedUUID(), type: String, data: String, metadata: String = "{}") {
        self.eventId = eventId
        self.type = type
        self.data = data
        self.metadata = metadata
    }
}

/// An event as stored in the log.
public struct RecordedEvent: Sendable, Hashable {
    /// Global position in the log: contiguous, starting at 1.
    public var position: Int64
    public var streamId: String
    /// Version within the stream, starting at 1.
    public var version: Int64
    public var eventId: UUID
    public var type: String
    public var data: String
    public var metadata: String
    /// Commit time in microseconds since the Unix epoch (the exact value the hash covers).
    public var recordedAtMicros: Int64
    /// SHA-256 chaining this event to the previous one (see ``HashChain``).
    public var hash: [UInt8]

    public init(
        position: Int64, streamId: String, version: Int64, eventId: UUID, type: String,
        data: String, metadata: String, recordedAtMicros: Int64, hash: [UInt8]
    ) {
        self.position = position
        self.streamId = streamId
        self.version = version
        self.eventId = eventId
        self.type = type
        self.data = data
        self.metadata = metadata
        self.recordedAtMicros = recordedAtMicros
        self.hash = hash
    }

    public var recordedAt: Date {
        RecordedTime.date(micros: recordedAtMicros)
    }
}

/// The stream version an append expects to find.
public enum ExpectedVersion: Sendable, Hashable, CustomStringConvertible {
    /// The stream must not exist yet.
    case noStream
    /// The stream must be exactly at this version (0 means "no events", same as `.noStream`).
    case exact(Int64)
    /// No check.
    case any

    public func matches(current: Int64) -> Bool {
        switch self {
        case .noStream: current == 0
        case .exact(let v): current == v
        case .any: true
        }
    }

    public var description: String {
        switch self {
        case .noStream: "no stream"
        case .exact(let v): "version \(v)"
        case .any: "any version"
        }
    }
}

/// Who caused an event and in answer to what; stored as the event's metadata.
public struct EventMetadata: Codable, Sendable, Hashable {
    public var actor: String?
    public var causationId: String?
    /// The SHA-256 (lowercase hex) of the start's `Idempotency-Key`, never the key (plaintext in
    /// events before Migrations/sql/0020).
    public var correlationId: String?
    /// The request's id as the logs show it: the SHA-256 (lowercase hex) of a caller's
    /// `X-Request-Id`, or the server's own id (RequestIdMiddleware; plaintext before 0020).
    public var requestId: String?

    public init(actor: String? = nil, causationId: String? = nil, correlationId: String? = nil, requestId: String? = nil) {
        self.actor = actor
        self.causationId = causationId
        self.correlationId = correlationId
        self.requestId = requestId
    }

    public func json() -> String { CanonicalJSON.encode(self) }
}

/// Deterministic JSON (sorted keys, no escaped slashes): the same value always gives the same bytes.
public enum CanonicalJSON {
    public static func encode<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        // Encoding our own value types cannot fail; a failure is a programming error.
        let data = try! encoder.encode(value)
        return String(decoding: data, as: UTF8.self)
    }

    public static func decode<T: Decodable>(_ type: T.Type, from json: String) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(type, from: Data(json.utf8))
    }
}
