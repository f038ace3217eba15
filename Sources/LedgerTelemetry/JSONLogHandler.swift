import Foundation
import LedgerWire
import Logging

/// `LEDGER_LOG_FORMAT=json`: one JSON object per line, for log shippers. Each line has `time`
/// (RFC 3339, milliseconds), `level`, `label`, `message`, `source`, and the metadata's keys at
/// the top level (a request's lines carry its id as `hb.request.id`); nested metadata is kept as
/// JSON arrays and objects.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    let label: String
    let write: @Sendable (String) -> Void

    public init(label: String, write: @escaping @Sendable (String) -> Void = JSONLogHandler.standardError) {
        self.label = label
        self.write = write
    }

    /// Writes a line to stderr in one call, so lines of concurrent tasks do not interleave.
    public static let standardError: @Sendable (String) -> Void = { line in
        FileHandle.standardError.write(Data(line.utf8))
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(
        level: Logger.Level, message: Logger.Message, metadata explicit: Logger.Metadata?, source: String, file: String,
        function: String, line: UInt
    ) {
        var object: [String: Any] = [:]
        for (key, value) in metadata.merging(explicit ?? [:], uniquingKeysWith: { $1 }) { object[key] = Self.json(value) }
        object["time"] = APIJSON.time(Date())
        object["level"] = level.rawValue
        object["label"] = label
        object["message"] = message.description
        object["source"] = source
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        write(String(decoding: data, as: UTF8.self) + "\n")
    }

    static func json(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): text
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): values.map(json)
        case .dictionary(let values): values.mapValues(json)
        }
    }
}
