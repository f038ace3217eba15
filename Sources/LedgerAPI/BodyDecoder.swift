import Foundation
import Hummingbird
import LedgerDomain
import LedgerWire

/// Reads JSON bodies with a size limit and turns every decoding failure into a clear 400. Times
/// are RFC 3339 text (`RFC3339.date`: with or without fractional seconds, `Z` or an offset).
public enum BodyDecoder {
    public static func decode<T: Decodable>(_ type: T.Type, from request: Request, context: LedgerRequestContext, limit: Int) async throws
        -> T
    {
        let buffer = try await collect(request, limit: limit)
        guard buffer.readableBytes > 0 else { throw DomainError.invalid("a JSON body is required", code: .malformedJSON) }
        do {
            return try decoder.decode(T.self, from: Data(buffer.readableBytesView))
        } catch let DecodingError.dataCorrupted(context) where context.codingPath.isEmpty {
            throw DomainError.invalid("the body is not valid JSON", code: .malformedJSON)
        } catch let DecodingError.keyNotFound(key, context) {
            throw DomainError.invalid("missing field \(path(context.codingPath + [key]))", code: .missingField)
        } catch let DecodingError.typeMismatch(_, context) {
            throw DomainError.invalid("wrong type at \(path(context.codingPath))", code: .wrongType)
        } catch let DecodingError.valueNotFound(_, context) {
            throw DomainError.invalid("null at \(path(context.codingPath))", code: .wrongType)
        } catch let DecodingError.dataCorrupted(context) {
            // The checks' own descriptions ("not an RFC 3339 time …") say what is wrong.
            let why = context.debugDescription.isEmpty ? "" : ": \(context.debugDescription)"
            throw DomainError.invalid("invalid value at \(path(context.codingPath))\(why)", code: .invalidValue)
        } catch let error as DomainError {
            throw error
        } catch {
            throw DomainError.invalid("the body could not be read as JSON", code: .malformedJSON)
        }
    }

    /// The request's body, at most `limit` bytes (413 past it).
    public static func collect(_ request: Request, limit: Int) async throws -> ByteBuffer {
        var request = request
        do {
            return try await request.collectBody(upTo: limit)
        } catch {
            throw DomainError(.payloadTooLarge, "request body exceeds \(limit) bytes")
        }
    }

    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = RFC3339.date(text) else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: decoder.codingPath, debugDescription: "not an RFC 3339 time such as 2026-05-01T09:00:00Z"))
            }
            return date
        }
        return decoder
    }

    public static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().trimmingCharacters(in: ["."])
    }
}
