import Foundation
import HTTPTypes
import LedgerDeviceSimulator
import LedgerDomain
import LedgerReadModel
import LedgerStore
import LedgerTestSupport
import LedgerWire
import Logging
import Testing

/// The read model without HTTP: the member fold paged at one position, cursors bound to their
/// list, and `minPosition` waits.
@Suite("Reads")
struct ReadsTests {
    @Test("members paged at one position join into the whole answer; a changed or another list's cursor refused")
    func memberPages() async throws {
        try await LiveServer.run { api in
            let started = try await api.call(.post, "/v1/collaborations", as: "devin", json: startBody).body
            let id = started["collaborationId"]!.string!
            let people = (0..<25).map { _ in SimulatedPerson(collaborationId: id, devices: 1) }
            let added = try await api.call(
                .post, "/v1/collaborations/\(id)/participants", as: "devin",
                json: #"{"added":[\#(people.map { "\"\($0.rootHash)\"" }.joined(separator: ","))]}"#)
            let position = try #require(added.body["position"]?.int)
            let client = ReadClient(
                primary: api.db, store: EventStore(client: api.db, logger: Logger(label: "test")), logger: Logger(label: "test"),
                readWait: .seconds(20))
            let reads = try await client.reads(minPosition: position)
            let owner = Caller(account: "devin")

            let whole = try await reads.members(id, caller: owner, limit: 100)
            #expect(whole.members.count == 25 && whole.nextCursor == nil)
            #expect(whole.members.map(\.rootHash) == people.map(\.rootHash.base64).sorted())
            var walked: [Members.Member] = []
            var page = try await reads.members(id, caller: owner, limit: 10)
            walked += page.members
            while let cursor = page.nextCursor {
                page = try await reads.members(id, caller: owner, limit: 10, cursor: cursor)
                walked += page.members
            }
            #expect(walked == whole.members)

            let cursor = try #require(try await reads.members(id, caller: owner, limit: 10).nextCursor)
            await #expect(throws: DomainError.self) { try await reads.members(id, caller: owner, cursor: cursor + "x") }
            await #expect(throws: DomainError.self) { try await reads.history(id, caller: owner, cursor: cursor) }
            // At the start, before the identities were added, none of them stood there; after the
            // first was added, it alone.
            let start = try #require(started["position"]?.int)
            #expect(try await reads.members(id, caller: owner, atPosition: start).members.isEmpty)
            #expect(try await reads.members(id, caller: owner, atPosition: start + 1).members.count == 1)
        }
    }

    @Test("a minPosition past the log's head is refused at once, not waited for")
    func pastTheHead() async throws {
        try await LiveServer.run { api in
            let client = ReadClient(
                primary: api.db, store: EventStore(client: api.db, logger: Logger(label: "test")), logger: Logger(label: "test"))
            await #expect {
                try await client.reads(minPosition: 1_000)
            } throws: { error in
                (error as? DomainError)?.code == .invalidQuery
            }
        }
    }
}
