import Foundation
import LedgerClient
import LedgerDeviceSimulator
import LedgerTestSupport
import Testing
import TransparencyLog

/// The SDK verifying from the public tiles, trusting only the log's key: a device checks its
/// own grant, computing the inclusion proof itself against the published checkpoint.
@Suite("LedgerClient from tiles")
struct TileVerificationTests {
    @Test("a device checks its own grant: evidence, then inclusion from tiles; another account's is refused it")
    func deviceChecksItsGrant() async throws {
        try await LiveServer.run { server in
            let devin = server.client("devin")
            let id = try await devin.prepareCollaboration(localIdentifier: "d", title: "T", initiator: Initiator(handle: "d@example.com"))
                .identifier
            let (alice, bob) = (SimulatedPerson(collaborationId: id, devices: 1), SimulatedPerson(collaborationId: id, devices: 1))
            _ = try await devin.updateParticipants(added: [alice.rootHashData, bob.rootHashData], in: id)
            guard case .granted(_, _, let position) = try await verify(server.client("alice"), alice, in: id),
                case .granted(_, _, let bobs) = try await verify(server.client("bob"), bob, in: id)
            else {
                Issue.record("not granted")
                return
            }
            let key = server.signer.verifier
            let client = server.client("alice")
            try await waitUntil(timeout: .seconds(30), "a published checkpoint covering the grants") {
                (try? await client.publishedCheckpoint(key: key).checkpoint.size) ?? 0 >= bobs
            }
            let verified = try await client.verifyGrant(position: position, key: key)
            #expect(verified.checkpoint.size >= position)
            // Another leaf at that position is not in the tree; bob's grant is not alice's to fetch.
            await #expect(throws: LogAuditFailure.self) { try await client.verifyInclusion(leaf: [1, 2, 3], position: position, key: key) }
            #expect(await rejection { _ = try await client.verifyGrant(position: bobs, key: key) }?.status == 403)
            // Another key: the published checkpoint does not open.
            await #expect(throws: (any Error).self) {
                try await client.verifyGrant(position: position, key: try NoteSigner(name: key.name).verifier)
            }
        }
    }
}
