import Foundation
import LedgerDeviceSimulator
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import Logging
import PostgresNIO
import Synchronization
import Testing

@testable import LedgerProjections

let logger = Logger(label: "projection-test")

// What the projection tests share: writers, the fold and the views to compare, the projections' rows.

/// Appends simulated collaborations, `writers` at a time, each collaboration in a few appends.
func writeCollaborations(_ store: EventStore, count: Int, seed: UInt64, writers: Int = 4) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for w in 0..<writers {
            group.addTask {
                var simulator = LogSimulator(seed: seed &* 1000 &+ UInt64(w), lifecycle: true)
                for _ in 0..<(count / writers) {
                    try await append(simulator.collaboration(events: 30), to: store, chunk: 7)
                }
            }
        }
        try await group.waitForAll()
    }
}

/// The members of every collaboration as a fold of the log (the domain's own fold) at a position:
/// each identity's state, account and window (the views keep no count of windows).
func foldedMembers(_ store: EventStore, upTo position: Int64? = nil) async throws -> [String: [String: CollaborationState.Identity]] {
    try await ViewAudit.fold(store, upTo: position ?? .max).mapValues { state in
        state.identities.mapValues { identity in
            CollaborationState.Identity(
                status: identity.status, account: identity.account, window: AccessWindow(stored: identity.notBefore, identity.notAfter))
        }
    }
}

/// The same, from the views (current members, or time travel through the access history).
func viewMembers(_ client: PostgresClient, at position: Int64? = nil) async throws -> [String: [String: CollaborationState.Identity]] {
    var result: [String: [String: CollaborationState.Identity]] = [:]
    let ids = try await client.query("SELECT collaboration_id FROM proj_collaborations")
    for try await id in ids.decode(String.self) { result[id] = [:] }
    // The window's bounds in microseconds, which `AccessWindow` spells as the events do.
    let window = "(extract(epoch FROM not_before) * 1000000)::int8, (extract(epoch FROM not_after) * 1000000)::int8"
    if let position {
        for id in result.keys {
            let rows = try await client.query(
                "SELECT root_hash, state, account, \(unescaped: window) FROM ledger_member_fold(\(id), '', \(position)) WHERE state <> 'removed'"
            )
            for try await (hash, state, account, start, end) in rows.decode((String, String, String?, Int64?, Int64?).self) {
                result[id]![hash] = .init(
                    status: .init(rawValue: state)!, account: account, window: try AccessWindow(notBeforeMicros: start, notAfterMicros: end)
                )
            }
        }
    } else {
        let rows = try await client.query("SELECT collaboration_id, root_hash, state, account, \(unescaped: window) FROM proj_members")
        for try await (id, hash, state, account, start, end) in rows.decode((String, String, String, String?, Int64?, Int64?).self) {
            result[id, default: [:]][hash] = .init(
                status: .init(rawValue: state)!, account: account, window: try AccessWindow(notBeforeMicros: start, notAfterMicros: end))
        }
    }
    return result
}

/// Current identities only, and only collaborations that have some (time travel lists no removed ones).
func withoutRemoved(_ members: [String: [String: CollaborationState.Identity]]) -> [String: [String: CollaborationState.Identity]] {
    members.mapValues { $0.filter { $0.value.status != .removed } }.filter { !$0.value.isEmpty }
}

func projection(_ client: PostgresClient, _ name: Projection) async throws -> (position: Int64, status: String, errorPosition: Int64?) {
    let rows = try await client.query("SELECT position, status, error_position FROM ledger_projections WHERE name = \(name.rawValue)")
    for try await row in rows.decode((Int64, String, Int64?).self) { return row }
    struct Missing: Error {}
    throw Missing()
}

func head(_ client: PostgresClient) async throws -> Int64 {
    let rows = try await client.query("SELECT position FROM ledger_head")
    for try await p in rows.decode(Int64.self) { return p }
    return 0
}

/// Waits until every running projection has reached the head: at most 180 s, which a loaded whole
/// run once needed more than 60 of for 1,200 events (it ends as soon as they have).
func caughtUp(_ client: PostgresClient) async throws {
    try await waitUntil(timeout: .seconds(180), "projections caught up") {
        let h = try await head(client)
        for p in Projection.allCases where try await projection(client, p).position < h { return false }
        return true
    }
}
