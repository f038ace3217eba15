import Foundation
import HTTPTypes
import LedgerTestSupport
import LedgerWire
import Testing
import TransparencyLog

/// Times as RFC 3339 says, within the years 1 to 9999, exactly, through the real router: a leap
/// second, the last microseconds of the year 9999 and `asOf` in the year 1 are valid; past those
/// years, or a second 60 that is not a UTC day's last minute, is a 400 that changes nothing.
@Suite("Times as RFC 3339 says")
struct TimesTests {
    static func hash(_ n: UInt8) -> String { Base64.encode(Array(repeating: n, count: 32)) }

    @Test("a leap second, 9999-12-31T23:59:59.99999Z and year 1 kept exactly; other times a 400, no change")
    func windowsAndAsOf() async throws {
        try await LiveServer.run { api in
            let id = try #require(
                try await api.call(.post, "/v1/collaborations", as: "owner", json: startBody).body["collaborationId"]?.string)
            let path = "/v1/collaborations/\(id)/participants"
            let body = """
                {"added":[{"rootHash":"\(Self.hash(1))","notAfter":"9999-12-31T23:59:59.99999Z"},
                          {"rootHash":"\(Self.hash(2))","notAfter":"2099-12-31T23:59:60Z"},
                          {"rootHash":"\(Self.hash(3))","notAfter":"2099-12-31T15:59:60.5-08:00"},
                          {"rootHash":"\(Self.hash(4))","notBefore":"0001-01-01T00:00:00Z","notAfter":"2099-01-01T00:00:00Z"}]}
                """
            let added = try await api.call(.post, path, as: "owner", json: body)
            #expect(added.status == .ok, "\(added.raw)")
            let history = try await api.call(.get, "/v1/collaborations/\(id)/history", as: "owner")
            let windows = history.body["events"]?.array.filter { $0["type"]?.string == "IdentityAdded" }.map { $0["data"] } ?? []
            let kept = windows.map { ($0?["notBefore"]?.string, $0?["notAfter"]?.string) }
            #expect(
                kept.map(\.1) == [
                    "9999-12-31T23:59:59.999990Z", "2099-12-31T23:59:59.999999Z", "2099-12-31T23:59:59.999999Z",
                    "2099-01-01T00:00:00.000000Z",
                ], "\(kept)")
            #expect(kept.last?.0 == "0001-01-01T00:00:00.000000Z")
            let position = try #require(added.body["position"]?.int)
            let members = try await api.call(.get, "/v1/collaborations/\(id)/members?minPosition=\(position)", as: "owner")
            let last = members.body["members"]?.array.first { $0["rootHash"]?.string == Self.hash(1) }
            #expect(last?["notAfter"]?.string == "9999-12-31T23:59:59.999Z", "\(members.raw)")

            let events = try await api.eventCount()
            let refused = [
                ("10000-01-01T00:00:00Z", "invalid_value"), ("0000-12-31T23:59:59Z", "invalid_window"),
                ("2099-12-31T12:00:60Z", "invalid_value"), ("2099-12-31T23:59:60+01:00", "invalid_value"),
                ("2099-12-31T23:59:61Z", "invalid_value"), ("2099-02-29T00:00:00Z", "invalid_value"),
            ]
            for (time, code) in refused {
                let r = try await api.call(
                    .post, path, as: "owner", json: #"{"added":[{"rootHash":"\#(Self.hash(9))","notAfter":"\#(time)"}]}"#)
                #expect(r.status == .badRequest && r.body.errorCode == code, "\(time): \(r.raw)")
            }
            #expect(try await api.eventCount() == events, "a refused time changed nothing")

            for asOf in ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59.99999Z", "2016-12-31T23:59:60Z", "1582-10-10T00:00:00Z"] {
                let r = try await api.call(.get, "/v1/collaborations/\(id)/members?asOf=\(asOf)", as: "owner")
                #expect(r.status == .ok, "asOf=\(asOf): \(r.raw)")
            }
            for asOf in ["0000-12-31T23:59:59Z", "10000-01-01T00:00:00Z", "2016-12-31T12:00:60Z"] {
                let r = try await api.call(.get, "/v1/collaborations/\(id)/members?asOf=\(asOf)", as: "owner")
                #expect(r.status == .badRequest && r.body.errorCode == "invalid_query", "asOf=\(asOf): \(r.raw)")
            }
        }
    }
}
