import Foundation
import Hummingbird
import LedgerDomain
import LedgerStore
import LedgerWire

/// `POST /v1/privacy/erasures` and `GET /v1/privacy/export`: a data subject's erasure and access
/// (SPEC "Personal data and erasure"), for callers with the role `privacy`.
struct PrivacyController {
    let office: PrivacyOffice
    let bodyLimit: Int

    func addRoutes(to group: RouterGroup<LedgerRequestContext>) {
        group.post("privacy/erasures", use: erase)
        group.get("privacy/export", use: export)
    }

    @Sendable func erase(_ request: Request, context: LedgerRequestContext) async throws -> Erasure {
        let caller = try Self.officer(context)
        let body = try await BodyDecoder.decode(ErasureRequest.self, from: request, context: context, limit: bodyLimit)
        guard !body.account.isEmpty, body.account.count <= 512, !body.account.unicodeScalars.contains(where: { $0.value == 0 }) else {
            throw DomainError.invalid("account must be 1 to 512 characters, without NUL", code: .invalidValue)
        }
        // The reason (a short reference, `ErasureRequest.isValidReason`) is the office's to check:
        // the CLI erases through it too. The answer never names the pseudonym.
        return try await office.erase(account: body.account, reason: body.reason, requester: caller.account)
    }

    @Sendable func export(_ request: Request, context: LedgerRequestContext) async throws -> PersonalDataExport {
        _ = try Self.officer(context)
        guard let account = try Query.text(request, "account"), !account.isEmpty else {
            throw DomainError.invalid("account is required", code: .invalidQuery)
        }
        return try await office.export(account: account)
    }

    static func officer(_ context: LedgerRequestContext) throws -> Caller {
        let caller = try context.requireCaller()
        guard caller.isPrivacyOfficer else {
            throw DomainError(.notPrivacyOfficer, "erasing and exporting personal data needs the role privacy")
        }
        return caller
    }
}

extension Erasure: ResponseEncodable {}
extension PersonalDataExport: ResponseEncodable {}
