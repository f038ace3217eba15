import Foundation

// The reads. The list reads come a page at a time (`limit`, `cursor` → `nextCursor`), and each
// has an `all…` sequence that walks every page.
extension LedgerClient {

    public func collaboration(_ collaborationID: String, minPosition: Int64? = nil) async throws -> Collaboration {
        try await send(
            "GET", "/v1/collaborations/\(try Self.segment(collaborationID))", query: ["minPosition": minPosition.map(String.init)])
    }

    /// A page of members (root hash order; `limit` 1–1,000, default 100; `cursor`: the previous
    /// page's `nextCursor`), current or as they stood at a time (`asOf`) or log position
    /// (`atPosition`). `allMembers` walks every page.
    public func members(
        of collaborationID: String, asOf: Date? = nil, atPosition: Int64? = nil, minPosition: Int64? = nil, limit: Int? = nil,
        cursor: String? = nil
    ) async throws -> Members {
        try await send(
            "GET", "/v1/collaborations/\(try Self.segment(collaborationID))/members",
            query: [
                "asOf": asOf.map(Self.formatDate), "atPosition": atPosition.map(String.init),
                "minPosition": minPosition.map(String.init), "limit": limit.map(String.init), "cursor": cursor,
            ])
    }

    /// Every member, a page at a time, as they stood at the first page's position.
    public func allMembers(
        of collaborationID: String, asOf: Date? = nil, atPosition: Int64? = nil, minPosition: Int64? = nil, pageSize: Int = 1000
    ) -> LedgerPages<Members.Member> {
        LedgerPages { cursor in
            let page = try await members(
                of: collaborationID, asOf: asOf, atPosition: atPosition, minPosition: minPosition, limit: pageSize, cursor: cursor)
            return (page.members, page.nextCursor)
        }
    }

    /// A page of the collaboration's events in log order (owner or auditor).
    public func history(
        of collaborationID: String, minPosition: Int64? = nil, limit: Int? = nil, cursor: String? = nil
    ) async throws -> History {
        try await send(
            "GET", "/v1/collaborations/\(try Self.segment(collaborationID))/history",
            query: ["minPosition": minPosition.map(String.init), "limit": limit.map(String.init), "cursor": cursor])
    }

    /// Every event of the collaboration, a page at a time.
    public func allHistory(of collaborationID: String, minPosition: Int64? = nil, pageSize: Int = 1000) -> LedgerPages<History.Entry> {
        LedgerPages { cursor in
            let page = try await history(of: collaborationID, minPosition: minPosition, limit: pageSize, cursor: cursor)
            return (page.events, page.nextCursor)
        }
    }

    /// A page of the notices the caller may see, in log order.
    public func highlights(
        in collaborationID: String, minPosition: Int64? = nil, limit: Int? = nil, cursor: String? = nil
    ) async throws -> Highlights {
        try await send(
            "GET", "/v1/collaborations/\(try Self.segment(collaborationID))/highlights",
            query: ["minPosition": minPosition.map(String.init), "limit": limit.map(String.init), "cursor": cursor])
    }

    /// Every notice the caller may see, a page at a time.
    public func allHighlights(in collaborationID: String, minPosition: Int64? = nil, pageSize: Int = 1000) -> LedgerPages<Highlights.Notice>
    {
        LedgerPages { cursor in
            let page = try await highlights(in: collaborationID, minPosition: minPosition, limit: pageSize, cursor: cursor)
            return (page.highlights, page.nextCursor)
        }
    }

    public func myCollaborations(minPosition: Int64? = nil) async throws -> MyCollaborations {
        try await send("GET", "/v1/accounts/me/collaborations", query: ["minPosition": minPosition.map(String.init)])
    }

    /// A page of who gained and lost access when, in log order (auditor role).
    public func auditAccess(
        account: String? = nil, collaboration: String? = nil, from: Date? = nil, to: Date? = nil, minPosition: Int64? = nil,
        limit: Int? = nil, cursor: String? = nil
    ) async throws -> AccessAudit {
        try await send(
            "GET", "/v1/audit/access",
            query: [
                "account": account, "collaboration": collaboration, "from": from.map(Self.formatDate), "to": to.map(Self.formatDate),
                "minPosition": minPosition.map(String.init), "limit": limit.map(String.init), "cursor": cursor,
            ])
    }

    /// Every access record matching the filters, a page at a time.
    public func allAccessRecords(
        account: String? = nil, collaboration: String? = nil, from: Date? = nil, to: Date? = nil, minPosition: Int64? = nil,
        pageSize: Int = 1000
    ) -> LedgerPages<AccessAudit.Record> {
        LedgerPages { cursor in
            let page = try await auditAccess(
                account: account, collaboration: collaboration, from: from, to: to, minPosition: minPosition, limit: pageSize,
                cursor: cursor)
            return (page.records, page.nextCursor)
        }
    }
}
