import Foundation
import Hummingbird
import LedgerDomain
import LedgerReadModel
import LedgerWire
import NIOCore

/// Access records streamed as NDJSON or CSV (`AccessAuditText`), written a page at a time: an
/// export of any size holds one page in memory.
enum AuditExport {
    enum Format: String, Sendable {
        case json, ndjson, csv

        /// `?format=`, else the `Accept` header's choice, else JSON.
        init(asked request: Request) throws {
            let accept = request.headers[.accept] ?? ""
            let format =
                request.uri.queryParameters["format"].map(String.init)
                ?? (accept.contains("application/x-ndjson") ? "ndjson" : accept.contains("text/csv") ? "csv" : "json")
            guard let asked = Format(rawValue: format) else {
                throw DomainError.invalid("format must be json, ndjson or csv", code: .invalidQuery)
            }
            self = asked
        }

        var contentType: String {
            switch self {
            case .json: "application/json"
            case .ndjson: "application/x-ndjson"
            case .csv: "text/csv; charset=utf-8"
            }
        }
    }

    /// Writes `first` and every page after it (`next(limit, cursor)`), then finishes the body;
    /// `sharded`: the records name their shard (`AccessAuditText`).
    static func write(
        _ format: Format, first: AccessAudit, next: @Sendable (Int, String?) async throws -> AccessAudit, sharded: Bool = false,
        to writer: inout any ResponseBodyWriter
    ) async throws {
        if format == .csv {
            try await writer.write(ByteBuffer(string: sharded ? AccessAuditText.shardedCSVHeader : AccessAuditText.csvHeader))
        }
        var page = first
        while true {
            let text = format == .csv ? AccessAuditText.csvRows(page.records, sharded: sharded) : try AccessAuditText.ndjson(page.records)
            try await writer.write(ByteBuffer(string: text))
            guard let cursor = page.nextCursor else { break }
            page = try await next(PageCursors.maxLimit, cursor)
        }
        try await writer.finish(nil)
    }
}
