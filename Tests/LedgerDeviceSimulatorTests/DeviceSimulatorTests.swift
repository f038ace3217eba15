import Crypto
import Foundation
import LedgerDeviceSimulator
import LedgerDomain
import Testing

/// The simulated devices stand in for the seeds' devices in tests, the demo and benchmarks:
/// their proofs must be what the verifier accepts, and nothing else.
struct DeviceSimulatorTests {
    @Test("every device's proof leads to the person's root hash and verifies; another challenge's does not")
    func proofsVerify() throws {
        let person = SimulatedPerson(collaborationId: "c1", devices: 3, leafCount: 8)
        let challenge = [UInt8](repeating: 9, count: 32)
        for device in 0..<3 {
            for der in [true, false] {
                let root = try person.proof(device: device).verify(
                    signature: person.sign(challenge, device: device, der: der), challenge: challenge)
                #expect(root == person.rootHash)
            }
            #expect(throws: ProofRejection.badSignature) {
                try person.proof(device: device).verify(signature: person.sign(challenge, device: device), challenge: [1] + challenge)
            }
        }
        // Padded to the leaf count: three hashes for eight leaves.
        #expect(person.proof(device: 0).inclusionHashes.count == 3)
        #expect(person.leaves.count == 8)
    }

    @Test("a device key is diversified per collaboration: one master secret, other keys and roots elsewhere")
    func diversified() {
        let master = SymmetricKey(size: .bits256)
        let here = SimulatedPerson.diversifiedKey(master: master, collaborationId: "c1")
        let again = SimulatedPerson.diversifiedKey(master: master, collaborationId: "c1")
        let elsewhere = SimulatedPerson.diversifiedKey(master: master, collaborationId: "c2")
        #expect(here.publicKey.rawRepresentation == again.publicKey.rawRepresentation)
        #expect(here.publicKey.rawRepresentation != elsewhere.publicKey.rawRepresentation)
        let a = SimulatedPerson(collaborationId: "c1", masterSecrets: [master])
        let b = SimulatedPerson(collaborationId: "c2", masterSecrets: [master])
        #expect(a.rootHash != b.rootHash)
    }
}
