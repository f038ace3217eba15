import Foundation
import LedgerWire

/// How the API writes JSON and times: RFC 3339 with milliseconds, stable key order.
public enum APIJSON {
    public static func time(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(time(date))
        }
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

/// Access records as NDJSON (one JSON object per line) or CSV (RFC 4180 quoting).
public enum AuditExport {
    public static func ndjson(_ records: [AccessAudit.Record]) throws -> String {
        let encoder = APIJSON.encoder()
        return try records.map { String(decoding: try encoder.encode($0), as: UTF8.self) + "\n" }.joined()
    }

    public static func csv(_ records: [AccessAudit.Record]) -> String {
        func field(_ value: String?) -> String {
            guard let value else { return "" }
            guard value.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return value }
            return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        var out = "position,time,collaborationId,accountId,rootHash,change,reason,actor\r\n"
        for r in records {
            out += [
                String(r.position), APIJSON.time(r.time), r.collaborationId,
                r.accountId, r.rootHash, r.change, r.reason, r.actor,
            ].map(field).joined(separator: ",") + "\r\n"
        }
        return out
    }
}
