import Foundation
import LedgerDeviceSimulator
import LedgerTestSupport
import LedgerWire
import Testing

@testable import LedgerClient

@Suite("LedgerClient pages")
struct PagingClientTests {
    @Test("the all… sequences walk every page: the same members, history and access records as one large page")
    func walks() async throws {
        try await LiveServer.run { server in
            let devin = server.client("devin")
            let prepared = try await devin.prepareCollaboration(localIdentifier: "doc", title: "Doc", initiator: Initiator(handle: "devin"))
            let id = prepared.identifier
            let people = (0..<7).map { _ in SimulatedPerson(collaborationId: id, devices: 1) }
            let added = try await devin.updateParticipants(added: people.map(\.rootHashData), in: id)
            for (n, person) in people.prefix(5).enumerated() {
                guard case .granted = try await verify(server.client("user\(n)"), person, in: id) else {
                    Issue.record("not granted")
                    return
                }
            }
            let head = try await devin.postHighlight(.change, trigger: "edit", in: id)
            _ = added

            let members = try await devin.members(of: id, minPosition: head, limit: 1000)
            #expect(members.members.count == 7 && members.nextCursor == nil)
            var walked: [Members.Member] = []
            for try await member in devin.allMembers(of: id, minPosition: head, pageSize: 2) { walked.append(member) }
            #expect(walked == members.members)

            let history = try await devin.history(of: id, limit: 1000)
            var events: [History.Entry] = []
            for try await event in devin.allHistory(of: id, pageSize: 3) { events.append(event) }
            #expect(events == history.events && events.count >= 8)

            let auditor = server.client("auditor", roles: ["auditor"])
            let records = try await auditor.auditAccess(collaboration: id, minPosition: head, limit: 1000)
            var walkedRecords: [AccessAudit.Record] = []
            for try await record in auditor.allAccessRecords(collaboration: id, minPosition: head, pageSize: 2) {
                walkedRecords.append(record)
            }
            #expect(walkedRecords == records.records && walkedRecords.count == 5)
        }
    }
}

@Suite("LedgerClient errors")
struct ErrorCodeTests {
    @Test("a known code is typed, a code this SDK does not know is unknown, the raw text kept")
    func codes() {
        #expect(LedgerError(status: 400, code: "invalid_cursor", message: "m").kind == .invalidCursor)
        let newer = LedgerError(status: 409, code: "something_newer", message: "m")
        #expect(newer.kind == .unknown && newer.code == "something_newer")
    }
}
