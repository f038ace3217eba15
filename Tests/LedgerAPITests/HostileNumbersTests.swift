import AsyncHTTPClient
import Foundation
import LedgerAPI
import LedgerClient
import LedgerConfiguration
import LedgerTestSupport
import LedgerTokens
import NIOCore
import NIOHTTP1
import Testing
import TransparencyLog

/// SPEC "Public verification" and "Bad input": every number a path or query carries is
/// range-checked. Each numeric parameter of the reads, the log, evidence, paging, the feed and
/// the tiles gets the boundary values (0, -1, 2^31, 2^53, 2^55, 2^63-1, 2^64, 10^30, non-digits,
/// empty), with and without a token, over real HTTP: a 4xx, or a 200 where the value is valid;
/// never a 5xx, and the server is still up after each.
@Suite("Hostile numbers")
struct HostileNumbersTests {
    static let values = [
        "0", "-1", "2147483648", "9007199254740992", "36028797018963968", "9223372036854775807", "18446744073709551616",
        "1000000000000000000000000000000", "abc", "",
    ]

    /// Only a non-negative integer that fits Int64 may be valid; anything else must be a 4xx.
    static func mayBeValid(_ value: String) -> Bool { Int64(value).map { $0 >= 0 } ?? false }

    /// `value` as a tile index path: 3-digit groups, `x` on all but the last; as it is if it is
    /// not a decimal.
    static func index(_ value: String) -> String {
        guard !value.isEmpty, value.allSatisfy(\.isNumber) else { return value }
        var digits = value
        while digits.count % 3 != 0 { digits = "0" + digits }
        var groups: [String] = []
        var at = digits.startIndex
        while at < digits.endIndex {
            let end = digits.index(at, offsetBy: 3)
            groups.append(String(digits[at..<end]))
            at = end
        }
        return groups.enumerated().map { $0.offset == groups.count - 1 ? $0.element : "x" + $0.element }.joined(separator: "/")
    }

    /// The requests for one value: (path and query, header fields).
    static func requests(_ v: String, collaboration id: String) -> [(String, [(String, String)])] {
        let q = v.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? v
        var paths = [
            "/v1/log/checkpoint?size=\(q)",
            "/v1/log/proofs/inclusion?position=\(q)", "/v1/log/proofs/inclusion?position=1&treeSize=\(q)",
            "/v1/log/proofs/consistency?from=\(q)&to=\(q)", "/v1/log/proofs/consistency?from=0&to=\(q)",
            "/v1/log/proofs/consistency?from=\(q)&to=1",
            "/v1/audit/evidence/\(q)",
            "/v1/collaborations/\(id)?minPosition=\(q)",
            "/v1/collaborations/\(id)/members?atPosition=\(q)", "/v1/collaborations/\(id)/members?minPosition=\(q)",
            "/v1/collaborations/\(id)/members?limit=\(q)", "/v1/collaborations/\(id)/members?cursor=\(q)",
            "/v1/collaborations/\(id)/history?limit=\(q)", "/v1/collaborations/\(id)/history?minPosition=\(q)",
            "/v1/collaborations/\(id)/history?cursor=\(q)",
            "/v1/collaborations/\(id)/highlights?limit=\(q)", "/v1/collaborations/\(id)/highlights?minPosition=\(q)",
            "/v1/accounts/me/collaborations?minPosition=\(q)",  // not paged: no limit
            "/v1/collaborations?limit=\(q)", "/v1/collaborations?cursor=\(q)",
            "/v1/audit/access?limit=\(q)", "/v1/audit/access?minPosition=\(q)", "/v1/audit/access?cursor=\(q)",
            "/v1/feed?after=\(q)",
        ]
        for level in ["0", "1", "entries"] {
            paths += ["/tlog/tile/\(level)/\(index(v))", "/tlog/tile/\(level)/\(index(v)).p/1", "/tlog/tile/\(level)/000.p/\(q)"]
        }
        paths += ["/tlog/tile/\(q)/000", "/tlog/tile/\(q)/000.p/1"]
        // Times: a year past 9999 (or before 1) is as hostile as a number.
        paths += [
            "/v1/collaborations/\(id)/members?asOf=\(v)-01-01T00:00:00Z", "/v1/audit/access?from=\(v)-01-01T00:00:00Z",
            "/v1/audit/access?to=+\(v)-01-01T00:00:00Z",
        ]
        return paths.map { ($0, []) } + [("/v1/feed", [("Last-Event-ID", v)])]
    }

    /// Every numeric path and query parameter at its boundaries, with and without a token: a 4xx or
    /// a valid 200, never a 5xx, the server stays up.
    @Test("numeric path and query parameters at their bounds: a 4xx or a valid 200, never a 5xx")
    func boundaries() async throws {
        try await LiveServer.run { server in
            let owner = server.client("hostile-owner")
            let started = try await owner.prepareCollaboration(
                localIdentifier: "doc", title: "Numbers", initiator: Initiator(handle: "owner@example.com"))
            _ = try await owner.updateParticipants(added: [Data(repeating: 7, count: 32)], in: started.identifier)
            _ = try await TilesTests.fill(server, 300)
            let tokens: [String?] = [nil, try await server.authority.issue(account: "hostile-auditor", roles: ["auditor"])]
            var answered = 0
            for value in Self.values {
                for (path, fields) in Self.requests(value, collaboration: started.identifier) {
                    for token in tokens {
                        var request = HTTPClientRequest(url: server.baseURL.absoluteString + path)
                        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
                        for (name, field) in fields { request.headers.add(name: name, value: field) }
                        // The head is all this asks for: a feed that is served stays open, and
                        // dropping the body closes it.
                        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                        let status = Int(response.status.code)
                        #expect(status < 500, "\(path) \(fields) token: \(token != nil) → \(status)")
                        if !Self.mayBeValid(value) {
                            #expect((400..<500).contains(status), "\(path) \(fields) token: \(token != nil) → \(status)")
                        }
                        answered += 1
                    }
                }
                let health = try await HTTPClient.shared.execute(
                    HTTPClientRequest(url: server.baseURL.absoluteString + "/health"), timeout: .seconds(5))
                #expect(health.status == .ok, "the server stopped answering after the value \(value)")
            }
            #expect(answered == Self.values.count * (Self.requests("0", collaboration: "x").count) * 2)
        }
    }

    @Test("a tile index near 2^55 (an unauthenticated crash) is a 404; each tile width of such an index is 0")
    func tileIndexOverflow() throws {
        for index: Int64 in [1 << 55, (1 << 55) - 1, Int64.max / 256, Int64.max] {
            for level in [nil, 0, 1, 7, 63] {
                #expect(Tile.width(level: level, index: index, treeSize: 1000) == 0)
                #expect((0...256).contains(Tile.width(level: level, index: index, treeSize: Int64.max)))
            }
        }
        #expect(Tile(path: "tile/0/x036/x028/x797/x018/x963/968")?.index == 1 << 55)
        #expect(Tile(path: "tile/0/x018/x446/x744/x073/x709/x551/616") == nil)  // 2^64
        #expect(Tile.width(level: 0, index: 1 << 55, treeSize: Int64.max) == 0)  // its first leaf is past Int64
        #expect(Tile.width(level: 0, index: (1 << 55) - 1, treeSize: Int64.max) == 255)
    }
}
