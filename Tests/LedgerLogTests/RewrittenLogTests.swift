import Foundation
import LedgerClient
import LedgerDomain
import LedgerStore
import LedgerTestSupport
import LedgerWire
import Logging
import Testing
import TransparencyLog

@testable import LedgerLog

/// SPEC "Never sign over a rewritten log": a superuser cuts the log below its tree (the tree's
/// nodes and the checkpoints kept), then new writes take it past the tree again. The
/// checkpointer refuses throughout (counted: the fork alert's metric), names the first position
/// that differs, signs nothing past the tree, and `/v1/log/status` says cut, then rewritten.
@Suite("A rewritten log", .serialized)
struct RewrittenLogTests {
    /// Cut below its tree, then written past it: refused and counted while cut and after, nothing
    /// signed past the tree, status cut then rewritten (never lag 0), the first differing position
    /// named, still refused after the retry.
    @Test("a log cut below its tree, then written past: refused and counted, nothing signed, the change named")
    func cutThenWrittenPast() async throws {
        try await LiveServer.run(signer: try NoteSigner(name: "rewrite.test/ledger")) { server in
            let logger = Logger(label: "rewrite-test")
            let (store, tree, caller) = (
                EventStore(client: server.db, logger: logger), LogTree(client: server.db, logger: logger), server.client("rewrite")
            )
            _ = try await store.append(.init(streamId: "r", expectedVersion: .noStream, events: (0..<40).map { event("R", $0) }))
            try await waitUntil(timeout: .seconds(30), "a published checkpoint of 40") {
                (try await tree.latestCheckpoint()?.size ?? 0) == 40
            }
            try await waitUntil(timeout: .seconds(30), "the tree's edge at 40") {
                try await caller.logStatus().tree == .init(size: 40, state: "intact")
            }
            #expect(try await caller.logStatus().checkpointLagEvents == 0)

            let before = try await ForkRefusalTests.refusals(server)
            try await truncateLog(server.db, to: 30, keepingCheckpoints: true, keepingTree: true)
            try await waitUntil(timeout: .seconds(30), "a refusal of the cut log") { try await ForkRefusalTests.refusals(server) > before }
            let cut = try await caller.logStatus()
            #expect(cut.tree == .init(size: 40, state: "cut") && cut.head == 30 && cut.checkpointLagEvents == -10, "\(cut)")

            // Written past the tree again: events 31…55, other than those the tree was built from.
            #expect(
                try await store.append(.init(streamId: "s", expectedVersion: .noStream, events: (0..<25).map { event("S", $0) }))
                    .lastPosition == 55)
            let afterWrites = try await ForkRefusalTests.refusals(server)
            try await waitUntil(timeout: .seconds(30), "a refusal of the log written past its tree") {
                try await ForkRefusalTests.refusals(server) > afterWrites
            }
            #expect(try await caller.logStatus().tree == .init(size: 40, state: "rewritten"))
            #expect(try await LogStore(client: server.db, logger: logger).firstDifferent(upTo: 40) == 31)
            #expect(try await ForkRefusalTests.maxSigned(server) == 40, "a checkpoint was signed over the rewritten log")
            #expect(try await tree.latestCheckpoint()?.size == 40)

            // It stays refused (a check of what is stored, not a state that lapses).
            let again = try await ForkRefusalTests.refusals(server)
            try await waitUntil(timeout: .seconds(40), "another refusal after the retry") {
                try await ForkRefusalTests.refusals(server) > again
            }
            #expect(try await ForkRefusalTests.maxSigned(server) == 40)
        }
    }
}
