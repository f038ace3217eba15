import Foundation
import LedgerClient
import LedgerDeviceSimulator

/// A device answering a challenge through the SDK, as the seeds' `application(_:open:)` does.
public func verify(_ client: LedgerClient, _ person: SimulatedPerson, device: Int = 0, in collaboration: String, der: Bool = true)
    async throws -> ProofResult
{
    let challenge = try await client.challenge(for: collaboration)
    let proof = person.signedProof(challenge: challenge.data, device: device, der: der)
    return try await client.submitProof(
        publicKey: proof.publicKey, publicKeyIndex: proof.publicKeyIndex, inclusionHashes: proof.inclusionHashes,
        signature: proof.signature, challenge: challenge)
}

/// The `LedgerError` `body` throws; nil when it throws nothing or something else (the caller's
/// check then fails).
public func rejection(_ body: () async throws -> Void) async -> LedgerError? {
    do {
        try await body()
        return nil
    } catch let error as LedgerError {
        return error
    } catch {
        return nil
    }
}
