import Foundation
import HTTPTypes
import Hummingbird
import LedgerDomain
import LedgerVerifier
import LedgerWire
import TransparencyLog

/// Challenges and identity proofs.
struct ProofController {
    let service: ProofService
    let bodyLimit: Int

    func addRoutes(to group: RouterGroup<LedgerRequestContext>) {
        group.post("challenges", use: challenge)
        group.post("collaborations/:id/proofs", use: submit)
        group.get("collaborations/:id/proofs/:requestId", use: status)
    }

    @Sendable func challenge(_ request: Request, context: LedgerRequestContext) async throws -> EditedResponse<ChallengeResponse> {
        let caller = try context.requireCaller()
        let body = try await BodyDecoder.decode(ChallengeRequest.self, from: request, context: context, limit: bodyLimit)
        let issued = try await service.issueChallenge(collaborationId: body.collaborationId, account: caller.account)
        return EditedResponse(
            status: .created,
            response: ChallengeResponse(
                challengeId: issued.challengeId.uuidString.lowercased(), challenge: Base64.encode(issued.challenge),
                expiresAt: issued.expiresAt))
    }

    @Sendable func submit(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let id = try context.parameters.require("id")
        let body = try await BodyDecoder.decode(ProofRequest.self, from: request, context: context, limit: bodyLimit)
        guard let challengeId = UUID(uuidString: body.challengeId) else {
            throw DomainError.invalid("challengeId is not a challenge id", code: .invalidValue)
        }
        guard let signature = Base64.decode(body.signature) else {
            throw DomainError.invalid("signature is not valid standard base64", code: .invalidBase64)
        }
        guard let publicKey = Base64.decode(body.proof.publicKey) else {
            throw DomainError.invalid("proof.publicKey is not valid standard base64", code: .invalidBase64)
        }
        // Bounds the work of decoding; the proof's own check says the same.
        guard body.proof.inclusionHashes.count <= 32 else {
            throw DomainError.invalid("between 1 and 32 inclusion hashes are required", code: .invalidInclusionPath)
        }
        let hashes = try body.proof.inclusionHashes.enumerated().map { index, text in
            guard let bytes = Base64.decode(text) else {
                throw DomainError.invalid("proof.inclusionHashes[\(index)] is not valid standard base64", code: .invalidBase64)
            }
            return bytes
        }
        let submission = ProofSubmission(
            collaborationId: try Identifiers.collaborationId(id), account: caller.account, challengeId: challengeId, signature: signature,
            proof: IdentityProof(publicKey: publicKey, publicKeyIndex: body.proof.publicKeyIndex, inclusionHashes: hashes))
        let verdict = try await service.submit(submission)
        return try Self.response(verdict, collaborationId: id, request: request, context: context)
    }

    @Sendable func status(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let id = try context.parameters.require("id")
        guard let requestId = UUID(uuidString: try context.parameters.require("requestId")) else {
            throw DomainError.notFound("proof request")
        }
        let verdict = try await service.status(requestId: requestId, account: caller.account)
        return try Self.response(verdict, collaborationId: id, request: request, context: context)
    }

    static func response(_ verdict: Verdict, collaborationId: String, request: Request, context: LedgerRequestContext) throws -> Response {
        switch verdict {
        case .granted(let rootHash, let account, let position):
            return try ProofAnswer.granted(rootHash: rootHash, accountId: account, position: position)
                .response(from: request, context: context)
        case .rejected(let reason, let message, _):
            throw DomainError(.proofRejected, message, reason: reason)
        case .pending(let requestId):
            let id = requestId.uuidString.lowercased()
            var response = try ProofAnswer.pending(requestId: id, statusUrl: "/v1/collaborations/\(collaborationId)/proofs/\(id)")
                .response(from: request, context: context)
            response.status = .accepted
            return response
        }
    }
}
