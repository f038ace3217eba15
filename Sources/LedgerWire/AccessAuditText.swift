import Foundation

/// Access records as the exports write them: NDJSON (one JSON object per line) or CSV (RFC 4180
/// quoting). One definition for `GET /v1/audit/access?format=` and `ledger audit access`.
public enum AccessAuditText {
    public static let csvHeader = "position,time,collaborationId,accountId,rootHash,change,reason,actor,dueAt\r\n"
    /// On shards: a record's position is its shard's, named in a last column.
    public static let shardedCSVHeader = "position,time,collaborationId,accountId,rootHash,change,reason,actor,dueAt,shard\r\n"

    public static func ndjson(_ records: [AccessAudit.Record]) throws -> String {
        let encoder = APIJSON.encoder()
        return try records.map { String(decoding: try encoder.encode($0), as: UTF8.self) + "\n" }.joined()
    }

    public static func csv(_ records: [AccessAudit.Record]) -> String { csvHeader + csvRows(records) }

    /// The rows alone: a streamed export writes the header once, then a page's rows at a time.
    public static func csvRows(_ records: [AccessAudit.Record], sharded: Bool = false) -> String {
        func field(_ value: String?) -> String {
            guard let value = value.map(neutralised) else { return "" }
            guard value.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return value }
            return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        var out = ""
        for r in records {
            out +=
                [
                    String(r.position), APIJSON.time(r.time), r.collaborationId,
                    r.accountId, r.rootHash, r.change, r.reason, r.actor, r.dueAt.map(APIJSON.time),
                ].map(field).joined(separator: ",") + (sharded ? "," + (r.shard.map(String.init) ?? "") : "") + "\r\n"
        }
        return out
    }

    /// A cell a spreadsheet would run as a formula (it begins with `=`, `+`, `-`, `@`, a tab or
    /// a carriage return: an account id is whatever the identity provider issued) gets a leading
    /// `'`, so it is shown as text (OWASP's advice for CSV injection).
    static func neutralised(_ value: String) -> String {
        guard let first = value.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) else { return value }
        return "'" + value
    }
}
