import Foundation
import Logging
import HTTPTypes
import Hummingbird
import LedgerDomain
import LedgerWire

/// The v1 collaboration endpoints.
struct CollaborationController {
    let service: CollaborationService
    let bodyLimit: Int

    func addRoutes(to group: RouterGroup<LedgerRequestContext>) {
        group.post("collaborations", use: start)
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
        let command = StartCollaboration(
            localIdentifier: body.localIdentifier, title: body.title, initiatorHandle: body.initiatorHandle,
            initiatorName: body.initiatorName, shareOptions: body.shareOptions)
        let key = request.headers[HTTPField.Name("Idempotency-Key")!]
        let response = try await service.start(command, caller: caller, idempotencyKey: key, requestId: context.id)
        return EditedResponse(status: .created, response: response)
    }

    @Sendable func participants(_ request: Request, context: LedgerRequestContext) async throws -> ParticipantsResponse {
        let caller = try context.requireCaller()
        let id = try context.parameters.require("id")
        let body = try await BodyDecoder.decode(ParticipantsRequest.self, from: request, context: context, limit: bodyLimit)
        let added = try (body.added ?? []).enumerated().map { try RootHash(base64: $1, field: "added[\($0)]") }
        let removed = try (body.removed ?? []).enumerated().map { try RootHash(base64: $1, field: "removed[\($0)]") }
        return try await service.updateParticipants(
            collaborationId: id, added: added, removed: removed, caller: caller, requestId: context.id)
    }

    @Sendable func postHighlight(_ request: Request, context: LedgerRequestContext) async throws -> EditedResponse<PositionResponse> {
        let caller = try context.requireCaller()
        let id = try context.parameters.require("id")
        let body = try await BodyDecoder.decode(HighlightRequest.self, from: request, context: context, limit: bodyLimit)
        guard let kind = HighlightKind(rawValue: body.kind) else {
            throw DomainError.invalid("kind must be one of change, membership, mention, persistence", code: "invalid_highlight")
        }
        let mentioned = try body.mentionedRootHash.map { try RootHash(base64: $0, field: "mentionedRootHash") }
        let response = try await service.postHighlight(
            collaborationId: id, kind: kind, trigger: body.trigger, mentioned: mentioned, caller: caller, requestId: context.id)
        return EditedResponse(status: .created, response: response)
    }

    @Sendable func collaboration(_ request: Request, context: LedgerRequestContext) async throws -> Collaboration {
        let caller = try context.requireCaller()
        try await service.waitFor(position: try Query.position(request, "minPosition"))
        return try await service.collaboration(try context.parameters.require("id"), caller: caller)
    }

    @Sendable func members(_ request: Request, context: LedgerRequestContext) async throws -> Members {
        let caller = try context.requireCaller()
        try await service.waitFor(position: try Query.position(request, "minPosition"))
        let atPosition = try Query.position(request, "atPosition")
        let asOf = try Query.time(request, "asOf")
        if atPosition != nil && asOf != nil {
            throw DomainError.invalid("give asOf or atPosition, not both", code: "invalid_query")
        }
        return try await service.members(try context.parameters.require("id"), caller: caller, atPosition: atPosition, asOf: asOf)
    }

    @Sendable func history(_ request: Request, context: LedgerRequestContext) async throws -> History {
        let caller = try context.requireCaller()
        try await service.waitFor(position: try Query.position(request, "minPosition"))
        return try await service.history(try context.parameters.require("id"), caller: caller)
    }

    @Sendable func highlights(_ request: Request, context: LedgerRequestContext) async throws -> Highlights {
        let caller = try context.requireCaller()
        try await service.waitFor(position: try Query.position(request, "minPosition"))
        return try await service.highlights(try context.parameters.require("id"), caller: caller)
    }

    @Sendable func myCollaborations(_ request: Request, context: LedgerRequestContext) async throws -> MyCollaborations {
        let caller = try context.requireCaller()
        try await service.waitFor(position: try Query.position(request, "minPosition"))
        return try await service.myCollaborations(caller: caller)
    }

    /// JSON by default; `format=ndjson` or `format=csv` (or the matching Accept) exports the records.
    @Sendable func auditAccess(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let params = request.uri.queryParameters
        let accept = request.headers[.accept] ?? ""
        let format = params["format"].map(String.init)
            ?? (accept.contains("application/x-ndjson") ? "ndjson" : accept.contains("text/csv") ? "csv" : "json")
        guard ["json", "ndjson", "csv"].contains(format) else {
            throw DomainError.invalid("format must be json, ndjson or csv", code: "invalid_query")
        }
        let (from, to) = (try Query.time(request, "from"), try Query.time(request, "to"))
        try await service.waitFor(position: try Query.position(request, "minPosition"))
        let view = try await service.auditAccess(
            caller: caller, account: try Query.text(request, "account"), collaborationId: try Query.text(request, "collaboration"),
            from: from, to: to)
        switch format {
        case "ndjson":
            return Response(
                status: .ok, headers: [.contentType: "application/x-ndjson"],
                body: .init(byteBuffer: ByteBuffer(string: try AuditExport.ndjson(view.records))))
        case "csv":
            return Response(
                status: .ok, headers: [.contentType: "text/csv; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: AuditExport.csv(view.records))))
        default:
            return try view.response(from: request, context: context)
        }
    }
}

/// Reads JSON bodies with a size limit and turns every decoding failure into a clear 400.
enum BodyDecoder {
    static func decode<T: Decodable>(_ type: T.Type, from request: Request, context: LedgerRequestContext, limit: Int) async throws -> T {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limit)
        } catch {
            throw APIError(.contentTooLarge, "payload_too_large", "request body exceeds \(limit) bytes")
        }
        guard buffer.readableBytes > 0 else { throw DomainError.invalid("a JSON body is required", code: "malformed_json") }
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch let DecodingError.dataCorrupted(context) where context.codingPath.isEmpty {
            throw DomainError.invalid("the body is not valid JSON", code: "malformed_json")
        } catch let DecodingError.keyNotFound(key, context) {
            throw DomainError.invalid("missing field \(path(context.codingPath + [key]))", code: "missing_field")
        } catch let DecodingError.typeMismatch(_, context) {
            throw DomainError.invalid("wrong type at \(path(context.codingPath))", code: "wrong_type")
        } catch let DecodingError.valueNotFound(_, context) {
            throw DomainError.invalid("null at \(path(context.codingPath))", code: "wrong_type")
        } catch let DecodingError.dataCorrupted(context) {
            throw DomainError.invalid("invalid value at \(path(context.codingPath))", code: "invalid_value")
        } catch let error as DomainError {
            throw error
        } catch {
            throw DomainError.invalid("the body could not be read as JSON", code: "malformed_json")
        }
    }

    static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().trimmingCharacters(in: ["."])
    }
}

enum Query {
    /// A text filter; NUL cannot be stored in PostgreSQL text, so it is refused here, as in tokens.
    static func text(_ request: Request, _ name: String) throws -> String? {
        guard let raw = request.uri.queryParameters[name[...]] else { return nil }
        guard !raw.unicodeScalars.contains(where: { $0.value == 0 }), raw.count <= 256 else {
            throw DomainError.invalid("\(name) must be at most 256 characters, without NUL", code: "invalid_query")
        }
        return String(raw)
    }

    static func position(_ request: Request, _ name: String) throws -> Int64? {
        try integer(request, name, minimum: 0)
    }

    /// An optional integer parameter of at least `minimum` (and at most Int64.max).
    static func integer(_ request: Request, _ name: String, minimum: Int64) throws -> Int64? {
        guard let raw = request.uri.queryParameters[name[...]] else { return nil }
        guard let value = Int64(raw), value >= minimum else {
            throw DomainError.invalid(
                minimum == 0 ? "\(name) must be a non-negative integer" : "\(name) must be an integer of \(minimum) or more",
                code: "invalid_query")
        }
        return value
    }

    static func time(_ request: Request, _ name: String) throws -> Date? {
        guard let raw = request.uri.queryParameters[name[...]] else { return nil }
        let text = String(raw)
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = fractional.date(from: text) ?? plain.date(from: text) else {
            throw DomainError.invalid("\(name) must be an RFC 3339 time", code: "invalid_query")
        }
        return date
    }
}
