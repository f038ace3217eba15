import Foundation
import HTTPTypes
import Hummingbird
import LedgerDomain
import LedgerReadModel
import LedgerStore
import LedgerWire
import Logging

/// The v1 collaboration endpoints.
struct CollaborationController {
    let commands: CollaborationCommands
    let reads: ReadClient
    let bodyLimit: Int

    func addRoutes(to group: RouterGroup<LedgerRequestContext>) {
        group.post("collaborations", use: start)
        group.get("collaborations", use: list)
        group.get("collaborations/:id", use: collaboration)
        group.post("collaborations/:id/participants", use: participants)
        group.get("collaborations/:id/members", use: members)
        group.get("collaborations/:id/history", use: history)
        group.post("collaborations/:id/highlights", use: postHighlight)
        group.get("collaborations/:id/highlights", use: highlights)
        group.get("accounts/me/collaborations", use: myCollaborations)
        group.get("audit/access", use: auditAccess)
    }

    @Sendable func start(_ request: Request, context: LedgerRequestContext) async throws -> EditedResponse<StartResponse> {
        let caller = try context.requireCaller()
        let body = try await BodyDecoder.decode(StartRequest.self, from: request, context: context, limit: bodyLimit)
        let defaultAccess = try body.defaultAccess.map { try DefaultAccess(duration: $0.duration) }
        let command = StartCollaboration(
            localIdentifier: body.localIdentifier, title: body.title, initiatorHandle: body.initiatorHandle,
            initiatorName: body.initiatorName, shareOptions: body.shareOptions, defaultAccess: defaultAccess)
        let key = request.headers[.idempotencyKey]
        let response = try await commands.start(command, caller: caller, idempotencyKey: key, requestId: context.id)
        return EditedResponse(status: .created, response: response)
    }

    /// Every entry is parsed (root hashes, windows) before anything is decided: a bad one is a
    /// 400 naming it, and nothing changes.
    @Sendable func participants(_ request: Request, context: LedgerRequestContext) async throws -> ParticipantsResponse {
        let caller = try context.requireCaller()
        let id = try context.parameters.require("id")
        let body = try await BodyDecoder.decode(ParticipantsRequest.self, from: request, context: context, limit: bodyLimit)
        let (addedEntries, removedEntries, windowEntries) = (body.added ?? [], body.removed ?? [], body.windows ?? [])
        guard addedEntries.count + removedEntries.count + windowEntries.count <= Self.maxParticipantEntries else {
            throw DomainError.invalid("at most \(Self.maxParticipantEntries) identities per update (added, removed and windows together)")
        }
        let added: [(RootHash, AccessWindow?)] = try addedEntries.enumerated().map { index, entry in
            let field = "added[\(index)]"
            guard entry.hasWindow else { return (try RootHash(base64: entry.rootHash, field: field), nil) }
            return (
                try RootHash(base64: entry.rootHash, field: "\(field).rootHash"),
                try Self.window(notBefore: entry.notBeforeMicros, notAfter: entry.notAfterMicros, field: field)
            )
        }
        let removed = try removedEntries.enumerated().map { try RootHash(base64: $1, field: "removed[\($0)]") }
        let windows: [(RootHash, AccessWindow)] = try windowEntries.enumerated().map { index, entry in
            let field = "windows[\(index)]"
            return (
                try RootHash(base64: entry.rootHash, field: "\(field).rootHash"),
                try Self.window(notBefore: entry.notBeforeMicros, notAfter: entry.notAfterMicros, field: field)
            )
        }
        return try await commands.updateParticipants(
            collaborationId: id, added: added, removed: removed, windows: windows, caller: caller, requestId: context.id)
    }

    /// Entries of one participants update, `added`, `removed` and `windows` together (the domain
    /// holds to the same limit).
    static let maxParticipantEntries = 1000

    /// A request's window, its refusal naming the entry (`windows[2]: notBefore must be before notAfter`).
    static func window(notBefore: Int64?, notAfter: Int64?, field: String) throws -> AccessWindow {
        do {
            return try AccessWindow(notBeforeMicros: notBefore, notAfterMicros: notAfter)
        } catch let error as DomainError {
            throw DomainError(error.code, "\(field): \(error.message)")
        }
    }

    @Sendable func postHighlight(_ request: Request, context: LedgerRequestContext) async throws -> EditedResponse<PositionResponse> {
        let caller = try context.requireCaller()
        let id = try context.parameters.require("id")
        let body = try await BodyDecoder.decode(HighlightRequest.self, from: request, context: context, limit: bodyLimit)
        guard let kind = HighlightKind(rawValue: body.kind) else {
            throw DomainError.invalid("kind must be one of change, membership, mention, persistence", code: .invalidHighlight)
        }
        let mentioned = try body.mentionedRootHash.map { try RootHash(base64: $0, field: "mentionedRootHash") }
        let response = try await commands.postHighlight(
            collaborationId: id, kind: kind, trigger: body.trigger, mentioned: mentioned, caller: caller, requestId: context.id)
        return EditedResponse(status: .created, response: response)
    }

    @Sendable func list(_ request: Request, context: LedgerRequestContext) async throws -> CollaborationList {
        let caller = try context.requireCaller()
        let reads = try await reads.reads(minPosition: try Query.position(request, "minPosition"))
        let query = try Query.text(request, "q")
        if let query, query.count > 256 { throw DomainError.invalid("q is at most 256 characters", code: .invalidQuery) }
        return try await reads.collaborations(
            caller: caller, query: query?.isEmpty == true ? nil : query, limit: try Query.limit(request), cursor: try Query.cursor(request))
    }

    @Sendable func collaboration(_ request: Request, context: LedgerRequestContext) async throws -> Collaboration {
        let caller = try context.requireCaller()
        let reads = try await reads.reads(minPosition: try Query.position(request, "minPosition"))
        return try await reads.collaboration(try context.parameters.require("id"), caller: caller)
    }

    @Sendable func members(_ request: Request, context: LedgerRequestContext) async throws -> Members {
        let caller = try context.requireCaller()
        let reads = try await reads.reads(minPosition: try Query.position(request, "minPosition"))
        let atPosition = try Query.position(request, "atPosition")
        let asOf = try Query.time(request, "asOf")
        if atPosition != nil && asOf != nil {
            throw DomainError.invalid("give asOf or atPosition, not both", code: .invalidQuery)
        }
        return try await reads.members(
            try context.parameters.require("id"), caller: caller, atPosition: atPosition, asOf: asOf, limit: try Query.limit(request),
            cursor: try Query.cursor(request))
    }

    @Sendable func history(_ request: Request, context: LedgerRequestContext) async throws -> History {
        let caller = try context.requireCaller()
        let reads = try await reads.reads(minPosition: try Query.position(request, "minPosition"))
        return try await reads.history(
            try context.parameters.require("id"), caller: caller, limit: try Query.limit(request), cursor: try Query.cursor(request))
    }

    @Sendable func highlights(_ request: Request, context: LedgerRequestContext) async throws -> Highlights {
        let caller = try context.requireCaller()
        let reads = try await reads.reads(minPosition: try Query.position(request, "minPosition"))
        return try await reads.highlights(
            try context.parameters.require("id"), caller: caller, limit: try Query.limit(request), cursor: try Query.cursor(request))
    }

    @Sendable func myCollaborations(_ request: Request, context: LedgerRequestContext) async throws -> MyCollaborations {
        let caller = try context.requireCaller()
        let reads = try await reads.reads(minPosition: try Query.position(request, "minPosition"))
        return try await reads.myCollaborations(caller: caller)
    }

    /// JSON, a page at a time; `format=ndjson` or `format=csv` (or the matching Accept) exports
    /// every record matching the filters, streamed page by page (see `AuditExport`).
    @Sendable func auditAccess(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let export = try AuditExport.Format(asked: request)
        let (from, to) = (try Query.time(request, "from"), try Query.time(request, "to"))
        let (account, collaboration) = (try Query.text(request, "account"), try Query.text(request, "collaboration"))
        let (limit, cursor) = (try Query.limit(request), try Query.cursor(request))
        let reads = try await reads.reads(minPosition: try Query.position(request, "minPosition"))
        let page: @Sendable (Int, String?) async throws -> AccessAudit = { limit, cursor in
            try await reads.auditAccess(
                caller: caller, account: account, collaborationId: collaboration, from: from, to: to, limit: limit, cursor: cursor)
        }
        // The first page before the answer starts: a refusal is still a 4xx, not a cut stream.
        let first = try await page(export == .json ? limit : PageCursors.maxLimit, cursor)
        guard export != .json else { return try first.response(from: request, context: context) }
        return Response(
            status: .ok, headers: [.contentType: export.contentType],
            body: ResponseBody { writer in try await AuditExport.write(export, first: first, next: page, to: &writer) })
    }
}
