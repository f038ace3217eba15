import Foundation
import LedgerBackup
import LedgerConfiguration
import LedgerDomain
import LedgerLog
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing
import TransparencyLog

/// Checkpoints cover only replicated events (SPEC "High availability"), on a real primary with a
/// real streaming standby (`pg_basebackup -R`, through a replication slot), both on loopback; the
/// checkpointer connects as a service login, as in production.
@Suite("Checkpoints and replication")
struct ReplicationGateTests {
    static let logger = Logger(label: "replication-gate-test")

    /// Synchronous: a commit cancelled while it waited for the stopped standby is visible but not
    /// signed; once the standby has its WAL it is.
    @Test("synchronous: a commit cancelled waiting on a stopped standby is signed only once the standby has it")
    func cancelledCommit() async throws {
        try await Self.withStandby(synchronous: true) { stage in
            let store = EventStore(client: stage.owner, logger: Self.logger)
            let before = try await stage.appendEven(store)
            try await stage.waitForCheckpoint(before)

            try await stage.standby.stop()
            // The commit waits for the synchronous standby that is gone; cancelled, it stays
            // committed on the primary only (PostgreSQL: "the transaction has already committed
            // locally, but might not have been replicated to the standby").
            let cancelled = Task {
                try await store.append(.init(streamId: "cancelled", expectedVersion: .any, events: [event(), event()]))
            }
            try await waitUntil(timeout: .seconds(30), "the append waits for the synchronous standby") {
                try await stage.cancelSyncRepWait()
            }
            let appended = try await cancelled.value
            #expect(appended.lastPosition == before + 2)
            #expect(try await store.head().position == before + 2, "committed on the primary")

            try await stage.expectNoCheckpoint(beyond: before, whileTreeReaches: before + 2)

            _ = try await stage.standby.startStandby(of: stage.ownerSettings)
            try await stage.waitForCheckpoint(before + 2)
        }
    }

    @Test("asynchronous: a standby away (slot kept) holds checkpoints at what it flushed; back, they resume")
    func laggingStandby() async throws {
        try await Self.withStandby(synchronous: false) { stage in
            let store = EventStore(client: stage.owner, logger: Self.logger)
            let flushed = try await stage.appendEven(store)
            try await stage.waitForCheckpoint(flushed)

            try await stage.standby.stop()
            let later = try await stage.appendEven(store, at: flushed + 10)
            try await stage.expectNoCheckpoint(beyond: flushed, whileTreeReaches: later)

            _ = try await stage.standby.startStandby(of: stage.ownerSettings)
            try await stage.waitForCheckpoint(later)
        }
    }

    /// Synchronous, with a backup's slot: checkpoints stop at what the backup flushed though the
    /// synchronous standby has more; the backup caught up, they resume.
    @Test("synchronous with a backup's slot: checkpoints stop at what the backup flushed; caught up, resume")
    func backupSlotUnderSynchronousReplication() async throws {
        try await Self.withStandby(synchronous: true) { stage in
            let store = EventStore(client: stage.owner, logger: Self.logger)
            let before = try await stage.appendEven(store)
            try await stage.waitForCheckpoint(before)
            // A backup that has flushed everything so far (its slot reserves WAL from now on), then stalls.
            try await stage.owner.query("SELECT pg_create_physical_replication_slot('ledger_backup_gate', true)")
            let later = try await stage.appendEven(store, at: before + 10)
            try await stage.expectNoCheckpoint(beyond: before, whileTreeReaches: later)
            // It catches up (as pg_receivewal's flush reports move the slot).
            try await stage.owner.query("SELECT pg_replication_slot_advance('ledger_backup_gate', pg_current_wal_flush_lsn())")
            try await stage.waitForCheckpoint(later)
            try await stage.owner.query("SELECT pg_drop_replication_slot('ledger_backup_gate')")
        }
    }

    @Test("a backup's receiver alone synchronous (Barman, RPO 0): the async standby that may be promoted counts")
    func synchronousBackupReceiverAlone() async throws {
        try await Self.withStandby(synchronous: false) { stage in
            let store = EventStore(client: stage.owner, logger: Self.logger)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "ledger-gate-receiver-\(UUID().uuidString.prefix(8))")
            defer { try? FileManager.default.removeItem(at: folder) }
            let archive = WALArchive(folder: folder)
            try FileManager.default.createDirectory(at: archive.wal, withIntermediateDirectories: true)
            try await WALArchive.ensureSlot("ledger_backup_gate", client: stage.owner, logger: Self.logger)
            let receiver = try archive.startStreaming(
                of: stage.ownerSettings, slot: "ledger_backup_gate", binaries: try EmbeddedPostgres.binaries(),
                log: folder.appendingPathComponent("receiver.log").path)
            defer { kill(receiver, SIGTERM) }
            // pg_receivewal connects as application_name ledger_backup (WALArchive): the only synchronous standby.
            try await stage.owner.query("ALTER SYSTEM SET synchronous_standby_names = 'ledger_backup'")
            try await stage.owner.query("SELECT pg_reload_conf()")
            try await waitUntil(timeout: .seconds(30), "the receiver acknowledging synchronously") {
                try await stage.owner.query(
                    "SELECT 1 FROM pg_stat_replication WHERE application_name = 'ledger_backup' AND sync_state = 'sync'"
                )
                .decode(Int.self).reduce(0, +) == 1
            }
            let flushed = try await stage.appendEven(store)
            try await stage.waitForCheckpoint(flushed)

            try await stage.standby.stop()
            let later = try await stage.appendEven(store, at: flushed + 10)
            try await stage.expectNoCheckpoint(beyond: flushed, whileTreeReaches: later, watchingCommits: false)

            _ = try await stage.standby.startStandby(of: stage.ownerSettings)
            try await stage.waitForCheckpoint(later)
            try await stage.owner.query("ALTER SYSTEM RESET synchronous_standby_names")
            try await stage.owner.query("SELECT pg_reload_conf()")
        }
    }

    /// A backup's slot made afresh (as a new leader does after a failover) does not let checkpoints
    /// pass what the backup flushed; its receiver back, they resume.
    @Test("a backup's slot made afresh (as after a failover) holds checkpoints at what the backup flushed")
    func backupSlotMadeAfresh() async throws {
        try await Self.withStandby(synchronous: false) { stage in
            let store = EventStore(client: stage.owner, logger: Self.logger)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-gate-afresh-\(UUID().uuidString.prefix(8))")
            defer { try? FileManager.default.removeItem(at: folder) }
            let archive = WALArchive(folder: folder)
            try FileManager.default.createDirectory(at: archive.wal, withIntermediateDirectories: true)
            let slot = "ledger_backup_afresh"
            try await WALArchive.ensureSlot(slot, client: stage.owner, logger: Self.logger)
            func receive() throws -> pid_t {
                try archive.startStreaming(
                    of: stage.ownerSettings, slot: slot, binaries: try EmbeddedPostgres.binaries(preferring: Setting.pgBin.value()),
                    log: folder.appendingPathComponent("receiver.log").path)
            }
            var receiver = try receive()
            let flushed = try await stage.appendEven(store)
            try await stage.waitForCheckpoint(flushed)
            // The backup stops; its slot is made afresh at the current WAL position, past what it has.
            kill(receiver, SIGTERM)
            _ = await ProcessRunner.exit(of: receiver)
            let later = try await stage.appendEven(store, at: flushed + 10)
            try await Self.waitUntilInactive(slot, stage.owner)
            try await stage.owner.query("SELECT pg_drop_replication_slot(\(slot))")
            try await WALArchive.ensureSlot(slot, client: stage.owner, logger: Self.logger)
            try await stage.expectNoCheckpoint(beyond: flushed, whileTreeReaches: later)

            receiver = try receive()
            try await stage.waitForCheckpoint(later)
            kill(receiver, SIGTERM)
            _ = await ProcessRunner.exit(of: receiver)
            try await Self.waitUntilInactive(slot, stage.owner)
            #expect(try await WALArchive.dropSlot(slot, client: stage.owner, logger: Self.logger))
        }
    }

    /// The receiver has exited; its walsender on the server may take a moment longer to notice,
    /// and a slot still active cannot be dropped.
    static func waitUntilInactive(_ slot: String, _ owner: PostgresClient) async throws {
        try await waitUntil(timeout: .seconds(30), "the slot \(slot) released by its walsender") {
            try await owner.query("SELECT count(*) FROM pg_replication_slots WHERE slot_name = \(slot) AND active")
                .decode(Int64.self).reduce(0, +) == 0
        }
    }

    /// The disaster drill's async mode found it: a checkpoint sent to the witnesses before the
    /// backup had its record, every node lost, and the restored log (events intact, record gone)
    /// could never sign again: a witness's size was above every checkpoint the database knew.
    /// Waits of 90 s: beside every other suite, a checkpoint's way to a witness through the
    /// replication gate took over 30 s in two whole runs (it takes about 2 s alone).
    @Test("a checkpoint goes to witnesses only once a backup has its record: signed, held, then cosigned")
    func sentOnceRecorded() async throws {
        let signer = try NoteSigner(name: "gate.test/ledger")
        let w1 = try TestWitness("w1.test", log: signer.verifier)
        try await w1.start()
        let policy = try WitnessPolicy("log \(signer.verifier.text)\n\(w1.policyLine("W1"))\nquorum W1\n")
        try await Self.withStandby(synchronous: false, signer: signer, witnesses: policy) { stage in
            let store = EventStore(client: stage.owner, logger: Self.logger)
            let first = try await stage.appendEven(store)
            try await waitUntil(timeout: .seconds(90), "cosigned \(first)") { try await w1.size(signer.name) == first }
            // A backup's slot (no receiver): it has flushed what is in the WAL now, and no more.
            try await stage.owner.query("SELECT pg_create_physical_replication_slot('ledger_backup_recorded', true)")
            let head = try await stage.appendEven(store, at: first + 10)
            try await stage.expectNoCheckpoint(beyond: first, whileTreeReaches: head)
            // Its events flushed by the backup (as pg_receivewal's reports move the slot): signed,
            // but the row recording that signature is past what the backup has.
            try await stage.owner.query("SELECT pg_replication_slot_advance('ledger_backup_recorded', pg_current_wal_flush_lsn())")
            try await waitUntil(timeout: .seconds(90), "a signed checkpoint of \(head)") {
                try await stage.owner.query("SELECT count(*) FROM ledger_checkpoints WHERE tree_size = \(head)").decode(Int64.self).reduce(
                    0, +) == 1
            }
            let watchUntil = ContinuousClock.now + .seconds(2)
            while ContinuousClock.now < watchUntil {
                #expect(try w1.size(signer.name) == first, "a witness cosigned a checkpoint the backup has no record of")
                try await Task.sleep(for: .milliseconds(100))
            }
            try await stage.owner.query("SELECT pg_replication_slot_advance('ledger_backup_recorded', pg_current_wal_flush_lsn())")
            try await waitUntil(timeout: .seconds(90), "cosigned \(head)") { try await w1.size(signer.name) == head }
            try await stage.owner.query("SELECT pg_drop_replication_slot('ledger_backup_recorded')")
        }
        await w1.stop()
    }

    /// A primary and its standby, migrated, with a checkpointer running as a service login.
    struct Stage: Sendable {
        let owner: PostgresClient
        let ownerSettings: DatabaseSettings
        let standby: EmbeddedPostgres
        let tree: LogTree

        /// Appends until the head is even and past `at` (so the last event completes a level-1
        /// node, which shows the checkpointer has built the tree through it); the head.
        func appendEven(_ store: EventStore, at least: Int64 = 10) async throws -> Int64 {
            var head = try await store.head().position
            while head < least || head % 2 != 0 {
                head = try await store.append(.init(streamId: "s\(head % 3)", expectedVersion: .any, events: [event()])).lastPosition
            }
            return head
        }

        func waitForCheckpoint(_ size: Int64) async throws {
            try await waitUntil(timeout: .seconds(60), "a checkpoint of size \(size)") {
                (try await tree.latestCheckpoint()?.size ?? 0) >= size
            }
        }

        /// Waits until the checkpointer has built the tree through `head` (the level-1 node its
        /// last two events complete), then watches it for two seconds (a held checkpointer looks
        /// again after 20 ms, 40 ms, … at most 1 s): the latest checkpoint stays at `beyond`, and no
        /// commit waits for the synchronous standby (a checkpoint signed would: it shows only once
        /// the standby has it).
        func expectNoCheckpoint(beyond size: Int64, whileTreeReaches head: Int64, watchingCommits: Bool = true) async throws {
            try await waitUntil(timeout: .seconds(30), "the tree built through \(head)") {
                try await tree.storedNodes(level: 1, from: head / 2 - 1, count: 1)[0] != nil
            }
            let watchUntil = ContinuousClock.now + .seconds(2)
            while ContinuousClock.now < watchUntil {
                let latest = try await tree.latestCheckpoint()?.size
                #expect(latest == size, "a checkpoint covers events the standby has not flushed")
                var waiting: Int64 = 0
                for try await n in try await owner.query("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'").decode(
                    Int64.self)
                {
                    waiting = n
                }
                // (Not where a synchronous receiver is running: every commit waits for it a moment.)
                if !watchingCommits { waiting = 0 }
                #expect(waiting == 0, "the checkpointer signs a tree the synchronous standby lacks (its commit waits for it)")
                if latest != size || waiting != 0 { return }
                try await Task.sleep(for: .milliseconds(50))
            }
        }

        /// Cancels a backend waiting for the synchronous standby; whether there was one.
        func cancelSyncRepWait() async throws -> Bool {
            let rows = try await owner.query("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'SyncRep'")
            for try await cancelled in rows.decode(Bool.self) where cancelled { return true }
            return false
        }
    }

    static func withStandby(
        synchronous: Bool, signer: NoteSigner? = nil, witnesses: WitnessPolicy? = nil, _ body: @Sendable (Stage) async throws -> Void
    ) async throws {
        try await withPrimaryAndStandby(slot: "gate_test", logger: logger) { ownerSettings, standby, _ in
            try await withClient(ownerSettings) { owner in
                if synchronous {
                    try await owner.query("ALTER SYSTEM SET synchronous_standby_names = '*'")
                    try await owner.query("SELECT pg_reload_conf()")
                }
                let service = try await PostgresAdmin.serviceLogin("ledger_app", on: ownerSettings, logger: logger)
                try await withClient(service) { client in
                    let events = NotificationHub(client: client, channel: EventStore.channel, logger: logger)
                    let checkpointer = Checkpointer(
                        client: client, signer: try signer ?? NoteSigner(name: "gate.test/ledger"), events: events, logger: logger,
                        interval: .milliseconds(20),
                        witnesses: witnesses.map {
                            WitnessClient(policy: $0, tree: LogTree(client: client, logger: logger), logger: logger)
                        })
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask { try await events.run() }
                        group.addTask { try await checkpointer.run() }
                        defer { group.cancelAll() }
                        try await body(
                            Stage(
                                owner: owner, ownerSettings: ownerSettings, standby: standby, tree: LogTree(client: owner, logger: logger)))
                    }
                }
            }
        }
    }
}
