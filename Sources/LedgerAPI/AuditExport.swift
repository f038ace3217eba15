import Foundation
import Hummingbird
import LedgerDomain
import LedgerReadModel
import LedgerWire
import NIOCore

/// Access records streamed as NDJSON or CSV (`AccessAuditText`), written a page at a time: an
/// export of any size holds one page in memory.
public enum AuditExport {
    public enum Format: String, Sendable {
        case json, ndjson, csv

        /// `?format=`, else the `Accept` header's choice, else JSON.
        public init(asked request: Request) throws {
            let accept = request.headers[.accept] ?? ""
            let format =
                request.uri.queryParameters["format"].map(String.init)
                ?? (accept.contains("application/x-ndjson") ? "ndjson" : accept.contains("text/csv") ? "csv" : "json")
            guard let asked = Format(rawValue: format) else {
                throw DomainError.invalid("format must be json, ndjson or csv", code: .invalidQuery)
            }
            self = asked
        }

        public var contentType: String {
            switch self {
            case .json: "application/json"
            case .ndjson: "application/x-ndjson"
            case .csv: "text/csv; charset=utf-8"
            }
        }
    }

    /// The CSV form's header and rows (`AccessAuditText`'s by default; a front joining several
    /// logs' records adds a column naming each record's log).
    public struct CSV: Sendable {
        public var header: String
        public var rows: @Sendable ([AccessAudit.Record]) -> String

        public init(header: String, rows: @escaping @Sendable ([AccessAudit.Record]) -> String) {
            (self.header, self.rows) = (header, rows)
        }

        public static let plain = CSV(header: AccessAuditText.csvHeader) { AccessAuditText.csvRows($0) }
    }

    /// Writes `first` and every page after it (`next(limit, cursor)`), then finishes the body.
    public static func write(
        _ format: Format, first: AccessAudit, next: @Sendable (Int, String?) async throws -> AccessAudit, csv: CSV = .plain,
        to writer: inout any ResponseBodyWriter
    ) async throws {
        if format == .csv { try await writer.write(ByteBuffer(string: csv.header)) }
        var page = first
        while true {
            let text = format == .csv ? csv.rows(page.records) : try AccessAuditText.ndjson(page.records)
            try await writer.write(ByteBuffer(string: text))
            guard let cursor = page.nextCursor else { break }
            page = try await next(PageCursors.maxLimit, cursor)
        }
        try await writer.finish(nil)
    }
}
