import Foundation
import LedgerReadModel
import Hummingbird
import NIOCore
import LedgerWire

/// Access records as NDJSON (one JSON object per line) or CSV (RFC 4180 quoting), written a
/// page at a time: an export of any size holds one page in memory.
public enum AuditExport {
    public enum Format: String, Sendable {
        case json, ndjson, csv

        var contentType: String {
            switch self {
            case .json: "application/json"
            case .ndjson: "application/x-ndjson"
            case .csv: "text/csv; charset=utf-8"
            }
        }
    }

    static let csvHeader = "position,time,collaborationId,accountId,rootHash,change,reason,actor,dueAt\r\n"

    /// Writes `first` and every page after it (`next(limit, cursor)`), then finishes the body.
    static func write(
        _ format: Format, first: AccessAudit, next: @Sendable (Int, String?) async throws -> AccessAudit,
        to writer: inout any ResponseBodyWriter
    ) async throws {
        if format == .csv { try await writer.write(ByteBuffer(string: csvHeader)) }
        var page = first
        while true {
            let text = format == .csv ? csvRows(page.records) : try ndjson(page.records)
            try await writer.write(ByteBuffer(string: text))
            guard let cursor = page.nextCursor else { break }
            page = try await next(PageCursors.maxLimit, cursor)
        }
        try await writer.finish(nil)
    }

    public static func ndjson(_ records: [AccessAudit.Record]) throws -> String {
        let encoder = APIJSON.encoder()
        return try records.map { String(decoding: try encoder.encode($0), as: UTF8.self) + "\n" }.joined()
    }

    public static func csv(_ records: [AccessAudit.Record]) -> String { csvHeader + csvRows(records) }

    /// A cell a spreadsheet would run as a formula (it begins with `=`, `+`, `-`, `@`, a tab or
    /// a carriage return: an account id is whatever the identity provider issued) gets a leading
    /// `'`, so it is shown as text (OWASP's advice for CSV injection).
    static func neutralised(_ value: String) -> String {
        guard let first = value.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) else { return value }
        return "'" + value
    }

    static func csvRows(_ records: [AccessAudit.Record]) -> String {
        func field(_ value: String?) -> String {
            guard let value = value.map(neutralised) else { return "" }
            guard value.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return value }
            return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        var out = ""
        for r in records {
            out += [
                String(r.position), APIJSON.time(r.time), r.collaborationId,
                r.accountId, r.rootHash, r.change, r.reason, r.actor, r.dueAt.map(APIJSON.time),
            ].map(field).joined(separator: ",") + "\r\n"
        }
        return out
    }
}
