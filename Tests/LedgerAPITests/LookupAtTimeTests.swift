import Foundation
import HTTPTypes
import LedgerClient
import LedgerDeviceSimulator
import LedgerDomain
import LedgerIndex
import LedgerPostgres
import LedgerTestSupport
import LedgerWire
import PostgresNIO
import Testing
import TransparencyLog

/// Members at a time, verified (`GET /v1/audit/lookup?…&at=T`, `VerifiedMembers.fold(…,
/// recordedBy:)`, `ledger audit members --at`): the answer bounds T by the log's first leaf
/// recorded after it, the fold equals the views' members as of T at every moment of a
/// collaboration's history, and each way to stretch or shrink the bound is refused by name.
@Suite("Index lookups at a time")
struct LookupAtTimeTests {
    /// The answer for `id` at `micros`, once a recorded revision covers `through`.
    static func lookup(_ api: LiveServer, _ id: String, at micros: Int64, through: Int64, key: NoteVerifier) async throws -> IndexLookup {
        let at = RecordedTime.text(micros: micros)
        return try await LookupAPITests.lookup(api, "collaboration=\(id)&at=\(at)", through: through, key: key)
    }

    /// The time of each listed event.
    static func times(_ lookup: IndexLookup) -> [Int64] {
        lookup.events.compactMap { Base64.decode($0.leaf).flatMap(EventLeaf.event(from:))?.recordedAtMicros }
    }

    @Test("members verified at each moment of a history equal the views' members as of it")
    func membersAtTimes() async throws {
        try await LiveServer.run(configuration: LookupAPITests.configuration, signer: try NoteSigner(name: "lookup.test/ledger")) { api in
            let (id, _, key, _) = try await LogAPITests.grantedLog(api)
            // Carol invited with a window that ends in a second; dana added, then removed; then
            // the expiry service records carol's window's end.
            let (carol, dana) = (SimulatedPerson(collaborationId: id, devices: 1), SimulatedPerson(collaborationId: id, devices: 1))
            let end = RecordedTime.text(micros: RFC3339.micros(Date()) + 1_000_000)
            for body in [
                #"{"added":[{"rootHash":"\#(carol.rootHash)","notAfter":"\#(end)"}]}"#, #"{"added":["\#(dana.rootHash)"]}"#,
                #"{"removed":["\#(dana.rootHash)"]}"#,
            ] {
                let r = try await api.call(.post, "/v1/collaborations/\(id)/participants", as: "devin", json: body)
                #expect(r.status == .ok, "\(r.raw)")
            }
            try await waitUntil(timeout: .seconds(30), "carol's AccessExpired") {
                try await api.db.query("SELECT count(*) FROM ledger_events WHERE event_type = 'AccessExpired'").decode(Int64.self)
                    .reduce(0) { $1 } == 1
            }
            let head = try await api.eventCount()
            let full = try await LookupAPITests.lookup(api, "collaboration=\(id)", through: head, key: key)
            // Each event's moment, the microsecond before it, and the window's end.
            let moments = Set(Self.times(full).flatMap { [$0 - 1, $0] } + [RecordedTime.micros(end)!]).sorted()
            for micros in moments {
                let lookup = try await Self.lookup(api, id, at: micros, through: head, key: key)
                let (report, state) = try VerifiedMembers.fold(lookup, key: key, collaboration: id, recordedBy: micros)
                var folded: [String: String] = [:]
                for (hash, identity) in state?.identities ?? [:] where identity.status != .removed {
                    folded[hash] = VerifiedMembers.status(identity, at: micros)
                }
                #expect(report.recordedThrough! < lookup.firstAfter!.inclusion.position)
                let at = RecordedTime.text(micros: micros)
                let served = try await api.call(.get, "/v1/collaborations/\(id)/members?asOf=\(at)", as: "devin")
                var members: [String: String] = [:]
                for member in served.body["members"]?.array ?? [] { members[member["rootHash"]!.string!] = member["state"]!.string! }
                if state == nil { #expect(served.status == .ok && members.isEmpty, "\(at): \(served.raw)") }
                #expect(folded == members, "at \(at): \(served.raw)")
            }
            // The SDK's call, and the CLI's: the same members, at the last event's time.
            let last = moments.last!
            let sdk = try await api.client("devin").verifiedMembers(collaboration: id, key: key, at: RecordedTime.date(micros: last))
            #expect(sdk.state?.identities.count == 4 && sdk.report.recordedThrough! >= full.positions.last!)
            let tokenFile = FileManager.default.temporaryDirectory.appendingPathComponent("owner-\(UUID().uuidString.prefix(8))")
            defer { try? FileManager.default.removeItem(at: tokenFile) }
            try await api.token("devin").write(to: tokenFile, atomically: true, encoding: .utf8)
            let output = try await ProcessRunner.run(
                ledgerBinary(),
                [
                    "audit", "members", id, "--url", api.baseURL.absoluteString, "--token-file", tokenFile.path, "--key", key.text,
                    "--at", RecordedTime.text(micros: last),
                ],
                environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LEDGER_") })
            #expect(
                output.status == 0 && output.output.contains("verified, \(id) at \(RecordedTime.text(micros: last))"), "\(output.output)")
            for state in ["granted", "invited", "removed", "expired"] {
                #expect(output.output.contains(" \(state) "), "\(state): \(output.output)")
            }
            // A bad time is a 400 that names the parameter.
            let bad = try await api.call(.get, "/v1/audit/lookup?collaboration=\(id)&at=yesterday", as: "devin")
            #expect(bad.status == .badRequest && bad.raw.contains("at must be an RFC 3339 time"), "\(bad.raw)")
        }
    }

    @Test("a bound missing, too early, swapped, past the revision, or for another time: refused")
    func boundsRefused() async throws {
        try await LiveServer.run(configuration: LookupAPITests.configuration, signer: try NoteSigner(name: "lookup.test/ledger")) { api in
            let (id, grant, key, _) = try await LogAPITests.grantedLog(api)
            let full = try await LookupAPITests.lookup(api, "collaboration=\(id)", through: grant, key: key)
            let times = Self.times(full)
            // At the grant's time, an honest answer: its bound is the first leaf after it.
            let at = times.last!
            let honest = try await Self.lookup(api, id, at: at, through: grant, key: key)
            let report = try LookupVerifier.verify(honest, key: key, asked: .collaboration(id), at: at)
            #expect(report.recordedThrough! >= grant && report.recordedThrough! < honest.firstAfter!.inclusion.position)

            func refused(_ what: String, at link: String, time: Int64 = at, _ change: (inout IndexLookup) -> Void) {
                var lookup = honest
                change(&lookup)
                let failure = #expect(throws: LookupVerifier.Failure.self, "\(what)") {
                    try LookupVerifier.verify(lookup, key: key, asked: .collaboration(id), at: time)
                }
                #expect(failure?.description.hasPrefix(link) == true, "\(what): \(String(describing: failure))")
            }
            refused("no bound", at: "at") { $0.firstAfter = nil }
            refused("an event recorded by then passed off as the bound", at: "first after") { $0.firstAfter = $0.events[0] }
            refused("the bound's leaf swapped", at: "first after") { $0.firstAfter!.leaf = $0.events.last!.leaf }
            refused("the bound's inclusion under another tree", at: "first after") { $0.firstAfter!.inclusion.treeSize -= 1 }
            // The same answer read for an earlier time: a listed event after it sits before the bound.
            refused("an answer for a later time", at: "times", time: times[0] - 1) { _ in }
            // A bound before the position from which the log's times rise (a log older than the rule).
            let early = #expect(throws: LookupVerifier.Failure.self) {
                try LookupVerifier.verify(
                    honest, key: key, asked: .collaboration(id), at: at, timesRiseFrom: honest.firstAfter!.inclusion.position + 1)
            }
            #expect(early?.description.hasPrefix("times") == true, "\(String(describing: early))")
            // A time past the revision's last event, under the checkpoint that holds its record:
            // the first leaf after it is past the record, and the revision misses what lies between.
            let record = honest.record
            let recordTime = try #require(Base64.decode(record.leaf).flatMap(EventLeaf.event(from:))?.recordedAtMicros)
            let late = try await api.call(
                .get, "/v1/audit/lookup?collaboration=\(id)&at=\(RecordedTime.text(micros: recordTime))&size=\(record.inclusion.treeSize)",
                as: "devin")
            let stale = try JSONDecoder().decode(IndexLookup.self, from: Data(late.raw.utf8))
            let failure = #expect(throws: LookupVerifier.Failure.self) {
                try LookupVerifier.verify(stale, key: key, asked: .collaboration(id), at: recordTime)
            }
            let description = failure?.description ?? ""
            #expect(description.hasPrefix("revision") || description.hasPrefix("at"), "\(description)")
        }
    }
}
