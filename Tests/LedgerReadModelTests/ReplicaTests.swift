import Foundation
import LedgerApp
import LedgerClient
import LedgerConfiguration
import LedgerDeviceSimulator
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import LedgerTokens
import Logging
import PostgresNIO
import Testing

/// Reads through a real streaming-replication hot standby (`pg_basebackup -R` from a primary of
/// the test's own, both on loopback): the API's reads go to it, a `minPosition` it has not
/// replayed goes to the primary, and a standby that stops degrades every read to the primary.
@Suite("Read replica")
struct ReplicaTests {
    /// Reads go to the standby (replay paused: a plain read is stale); a minPosition read the
    /// standby lacks is answered by the primary, never stale; replay resumed, the standby catches
    /// up; the standby stopped, reads go on from the primary.
    @Test("reads go to the standby; a minPosition it lacks to the primary; it catches up; stopped, reads go on")
    func hotStandby() async throws {
        let logger = Logger(label: "replica-test")
        try await withPrimaryAndStandby(logger: logger) { owner, standby, standbyOwner in
            let service = try await PostgresAdmin.serviceLogin("ledger_app", on: owner, logger: logger)
            var standbyService = standbyOwner
            (standbyService.username, standbyService.password) = (service.username, service.password)
            try await Self.run(
                service: service, standbyOwner: standbyOwner, standbyService: standbyService, standby: standby, logger: logger)
        }
    }

    static func run(
        service: DatabaseSettings, standbyOwner: DatabaseSettings, standbyService: DatabaseSettings, standby: EmbeddedPostgres,
        logger: Logger
    ) async throws {
        let authority = try await TokenAuthority(secret: "replica-test-secret-\(UUID())")
        let configuration = LedgerConfiguration.testing()
        try await withClient(standbyOwner) { replicaAdmin in
            let process = LedgerProcess(
                .serve, configuration: configuration, database: service, standby: standbyService, authority: authority)
            try await process.serving(logger: logger) { running in
                let devin = LedgerClient(baseURL: running.baseURL, transport: HTTPClientTransport()) {
                    try await authority.issue(account: "devin")
                }
                let prepared = try await devin.prepareCollaboration(
                    localIdentifier: "doc", title: "Doc", initiator: Initiator(handle: "devin@example.com"))
                let id = prepared.identifier
                let (first, second) = (SimulatedPerson(collaborationId: id, devices: 1), SimulatedPerson(collaborationId: id, devices: 1))
                let added = try await devin.updateParticipants(added: [first.rootHashData], in: id)
                try await waitUntil(timeout: .seconds(30), "the standby has the first identity") {
                    (try? await devin.members(of: id).members.count) == 1  // 404 until the standby has the collaboration
                }

                // Replay paused: the standby stands still while the primary moves on.
                try await replicaAdmin.query("SELECT pg_wal_replay_pause()")
                // A pause is only requested until replay reaches a point where it stops.
                try await waitUntil(timeout: .seconds(30), "replay paused") {
                    try await replicaAdmin.query("SELECT pg_get_wal_replay_pause_state() = 'paused'").decode(Bool.self).reduce(false) { $1 }
                }
                let later = try await devin.updateParticipants(added: [second.rootHashData], in: id)
                #expect(later.position > added.position)
                let fresh = try await devin.members(of: id, minPosition: later.position)
                #expect(fresh.members.count == 2 && fresh.position >= later.position, "minPosition: the primary's, never stale")
                // The primary's views have the second identity now: a plain read without it is the standby's.
                // (On a loaded machine a standby slower than a second to answer is left alone for 5 s, its
                // reads served by the primary meanwhile: the standby's answer is waited for.)
                try await waitUntil(timeout: .seconds(30), "a plain read answered by the paused standby") {
                    let stale = try await devin.members(of: id)
                    return stale.members.count == 1 && stale.position < later.position
                }

                // Replay resumed: the standby catches up and serves it.
                try await replicaAdmin.query("SELECT pg_wal_replay_resume()")
                try await waitUntil(timeout: .seconds(30), "the standby caught up") {
                    (try? await devin.members(of: id).members.count) == 2
                }

                // The standby stops: reads, with and without minPosition, come from the primary.
                try await standby.stop()
                let third = SimulatedPerson(collaborationId: id, devices: 1)
                let last = try await devin.updateParticipants(added: [third.rootHashData], in: id)
                #expect(try await devin.members(of: id, minPosition: last.position).members.count == 3)
                try await waitUntil(timeout: .seconds(30), "plain reads from the primary") {
                    (try? await devin.members(of: id).members.count) == 3
                }
            }
        }
    }
}
