import Foundation
import LedgerClient
import LedgerConfiguration
import LedgerDeviceSimulator
import LedgerDomain
import LedgerTestSupport
import Testing
import TransparencyLog

let tripOptions = ShareOptions(
    summary: "Anyone can edit",
    groups: [
        .init(
            identifier: "permission", title: "Permission", kind: .picker,
            options: [
                .init(identifier: "rw", title: "Can make changes", selected: true),
                .init(identifier: "ro", title: "Read only", selected: false),
            ])
    ])

@Suite("LedgerClient against a live server")
struct ClientTests {
    @Test("every endpoint through the SDK: the seeds' flow, reads, audit, errors decoded with code and reason")
    func lifeCycle() async throws {
        try await LiveServer.run { server in
            let devin = server.client("devin")
            let alice = server.client("alice")
            let bob = server.client("bob")
            #expect(await devin.isReady())

            // SWStartCollaborationAction: a retry with the same key is the same collaboration.
            let prepared = try await devin.prepareCollaboration(
                localIdentifier: "doc-7", title: "Trip plan", initiator: Initiator(handle: "devin@example.com", name: "Devin"),
                options: tripOptions, idempotencyKey: "start-doc-7")
            let again = try await devin.prepareCollaboration(
                localIdentifier: "doc-7", title: "Trip plan", initiator: Initiator(handle: "devin@example.com", name: "Devin"),
                options: tripOptions, idempotencyKey: "start-doc-7")
            #expect(again.identifier == prepared.identifier && again.url == prepared.url)
            #expect(prepared.url.absoluteString.hasSuffix("/collaborations/\(prepared.identifier)"))
            let id = prepared.identifier

            // SWUpdateCollaborationParticipantsAction with root hashes as Data.
            let alicePerson = SimulatedPerson(collaborationId: id, devices: 2)
            let bobPerson = SimulatedPerson(collaborationId: id, devices: 1)
            let added = try await devin.updateParticipants(
                added: [alicePerson.rootHashData, bobPerson.rootHashData], in: id)
            #expect(added.added.count == 2 && added.revokedAccounts.isEmpty)

            // Recipients open the link: challenge, device proof, submission.
            guard case .granted(let root, let account, _) = try await verify(alice, alicePerson, in: id) else {
                Issue.record("alice was not granted")
                return
            }
            #expect(root == alicePerson.rootHashData && account == "alice")
            guard case .granted = try await verify(alice, alicePerson, device: 1, in: id, der: false) else {
                Issue.record("alice's second device was not granted")
                return
            }
            guard case .granted(_, _, let bobGranted) = try await verify(bob, bobPerson, in: id) else {
                Issue.record("bob was not granted")
                return
            }

            // A refusal arrives as a LedgerError with the verifier's reason.
            let stolen = await rejection { _ = try await verify(server.client("mallory"), bobPerson, in: id) }
            #expect(stolen?.status == 403 && stolen?.code == "proof_rejected" && stolen?.kind == .proofRejected)
            #expect(stolen?.reason == "identity_claimed_by_another_account")

            // Reads come from the views: ask for them to have reached the last write.
            let collaboration = try await alice.collaboration(id, minPosition: bobGranted)
            #expect(collaboration.title == "Trip plan" && collaboration.owner == "devin")
            #expect(collaboration.selectedOptions["permission"] == ["rw"])
            #expect(collaboration.memberCounts.granted == 2)
            let members = try await devin.members(of: id, minPosition: bobGranted)
            #expect(Set(members.members.compactMap(\.accountId)) == ["alice", "bob"])
            let highlightPosition = try await alice.postHighlight(HighlightKind.change, trigger: "edit", in: id)
            let mention = try await alice.postHighlight(HighlightKind.mention, mentioning: bobPerson.rootHashData, in: id)
            #expect(mention > highlightPosition)
            let notices = try await bob.highlights(in: id, minPosition: mention)
            #expect(notices.highlights.map(\.kind).filter { $0 != "membership" } == ["change", "mention"])
            #expect(try await bob.myCollaborations(minPosition: mention).collaborations.map(\.collaborationId) == [id])

            // Removal revokes alice; time travel still shows her before it.
            let beforeRemoval = try await devin.members(of: id).position
            let removed = try await devin.updateParticipants(removed: [alicePerson.rootHashData], in: id)
            #expect(removed.revokedAccounts == ["alice"])
            let now = try await devin.members(of: id, minPosition: removed.position)
            #expect(now.members.map(\.rootHash) == [bobPerson.rootHash.base64], "a removed identity is no longer a member")
            let then = try await devin.members(of: id, atPosition: beforeRemoval)
            #expect(then.members.first { $0.rootHash == alicePerson.rootHash.base64 }?.state == "granted")
            let lostAccess = await rejection { _ = try await alice.collaboration(id, minPosition: removed.position) }
            #expect(lostAccess?.status == 403 && lostAccess?.code == "no_access")

            // Audit.
            let history = try await devin.history(of: id)
            #expect(history.events.first?.type == "CollaborationStarted")
            #expect(history.events.map(\.position) == history.events.map(\.position).sorted())
            let audit = try await server.client("auditor", roles: ["auditor"]).auditAccess(collaboration: id, minPosition: removed.position)
            #expect(audit.records.map(\.change).contains("revoked"))
            let notAuditor = await rejection { _ = try await bob.auditAccess() }
            #expect(notAuditor?.status == 403)

            // Errors: unknown ids, bad input, bad tokens.
            let unknown = await rejection { _ = try await devin.collaboration(UUID().uuidString.lowercased()) }
            #expect(unknown?.status == 404 && unknown?.code == "not_found")
            let badHash = await rejection { _ = try await devin.updateParticipants(added: [Data([1, 2, 3])], in: id) }
            #expect(badHash?.status == 400)
            let forged = LedgerClient(baseURL: server.baseURL, transport: HTTPClientTransport()) { "not-a-token" }
            let unauthorized = await rejection { _ = try await forged.myCollaborations() }
            #expect(unauthorized?.status == 401)
        }
    }

    @Test("without a verifier a proof is pending; its status URL answers through the SDK, to its submitter")
    func pendingProof() async throws {
        var configuration = LedgerConfiguration.testing()
        configuration.verdictWait = .milliseconds(200)
        try await LiveServer.run(.api, configuration: configuration) { server in
            let devin = server.client("devin")
            let alice = server.client("alice")
            let id = try await devin.prepareCollaboration(
                localIdentifier: "doc-8", title: "Notes", initiator: Initiator(handle: "devin@example.com")
            ).identifier
            let person = SimulatedPerson(collaborationId: id, devices: 1)
            try await devin.updateParticipants(added: [person.rootHashData], in: id)
            guard case .pending(let requestID, let statusURL) = try await verify(alice, person, in: id) else {
                Issue.record("expected pending without a verifier")
                return
            }
            #expect(statusURL.hasSuffix(requestID))
            guard case .pending = try await alice.proofStatus(requestID: requestID, in: id) else {
                Issue.record("expected still pending")
                return
            }
            let other = await rejection { _ = try await devin.proofStatus(requestID: requestID, in: id) }
            #expect(other?.status == 404)
        }
    }

    @Test("the verifiable log through the SDK: key, checkpoint, proofs and a grant's evidence, as an auditor")
    func verifiableLog() async throws {
        try await LiveServer.run { server in
            let devin = server.client("devin")
            let id = try await devin.prepareCollaboration(
                localIdentifier: "doc-9", title: "Ledger", initiator: Initiator(handle: "devin@example.com")
            ).identifier
            let person = SimulatedPerson(collaborationId: id, devices: 1)
            try await devin.updateParticipants(added: [person.rootHashData], in: id)
            guard case .granted(_, _, let position) = try await verify(server.client("alice"), person, in: id) else {
                Issue.record("expected a grant")
                return
            }
            let auditor = server.client("auditor", roles: ["auditor"])
            let key = try NoteVerifier(try await auditor.logKey())
            try await waitUntil(timeout: .seconds(30), "a checkpoint covering the grant") {
                (try? Checkpoint.open(try await auditor.checkpoint(), verifier: key).size) ?? 0 >= position
            }
            let checkpoint = try Checkpoint.open(try await auditor.checkpoint(), verifier: key)
            #expect(try Checkpoint.open(try await auditor.checkpoint(size: checkpoint.size), verifier: key) == checkpoint)
            let inclusion = try await auditor.inclusionProof(position: 1, treeSize: checkpoint.size)
            try MerkleProof.verifyInclusion(
                leafIndex: 0, treeSize: checkpoint.size, leafHash: Base64.decode(inclusion.leafHash)!,
                proof: inclusion.hashes.map { Base64.decode($0)! }, root: checkpoint.rootHash)
            let consistency = try await auditor.consistencyProof(from: 1, to: checkpoint.size)
            #expect(consistency.from == 1 && consistency.to == checkpoint.size)
            let report = try EvidenceVerifier.verify(try await devin.evidence(position: position), key: key)
            #expect(report.type == "AccessGranted" && report.deviceProofChecked)
            let refused = await rejection { _ = try await server.client("mallory").evidence(position: position) }
            #expect(refused?.status == 403)
        }
    }
}
