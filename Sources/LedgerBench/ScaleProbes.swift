import ArgumentParser
import Foundation
import LedgerApp
import LedgerBackup
import LedgerDomain
import LedgerIndexStore
import LedgerLog
import LedgerPostgres
import LedgerProjections
import LedgerStore
import LedgerTokens
import Logging
import PostgresNIO
import TransparencyLog

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `ledger-bench scale`'s measurements of a log at one size (`measure`), on a ledger running in
/// this process. Rates come with pgbench's single-row inserts measured at the same size.
struct ScaleProbes {
    let ledger: LocalLedger.Running
    /// The bench database (pgbench's and the backup's connection).
    let settings: DatabaseSettings
    let seconds: Double
    /// Where a backup whose restore must wait is recorded (deleted whatever happens).
    let deferred: ScaleBackup.Deferred
    let logger: Logger

    /// The figures at the log's present size. Tiles are fetched past leaf `tilesFrom` (where the
    /// previous size's fetches ended), so no fetch finds its tile kept in memory from before.
    func measure(tilesFrom: Int64) async throws -> ScaleRow {
        let client = ledger.client
        let store = EventStore(client: client, logger: logger)
        let head = try await store.head().position
        var row = ScaleRow(events: head)
        row.pgbench16 = try await Pgbench.rate(try Pgbench.path(), settings, clients: 16, seconds: seconds)
        let (appends, _, acknowledged) = try await BenchAppend.appendRate(
            store, writers: 16, batch: 1, tag: "scale-\(head)", seconds: seconds)
        row.appends16 = appends
        let (lags, _) = try await BenchAppend.checkpointLags(
            client, store: store, acknowledged: acknowledged, within: .seconds(600))
        row.ackToCheckpointP99 = Stats.percentile(lags, 0.99)
        row.indexLagP99 = try await indexLagP99(store, acknowledged: acknowledged)
        row.lookupP99 = try await lookupP99(store, head: head)
        row.starts = try await load(.starts, account: "scale-starts-\(head)").rate
        row.proofsP99 = try await load(.proofs, account: "scale-proofs-\(head)").p99
        try await BenchCommands.caughtUp(client, logger: logger)
        let asOf = try await BenchReplay.asOfLatency(client, store: store, logger: logger, queries: 200)
        (row.asOfFirstPageP99, row.asOfUnpagedP99) = (asOf.first.1, asOf.unpaged.1)
        let signed = try await LogTree(client: client, logger: logger).latestCheckpoint()?.size ?? 0
        (row.tileP99, row.bundleP99) = try await tiles(from: tilesFrom, through: signed)
        row.tilesThrough = signed
        // No event is appended from here on. Disk before the rebuild: the views as the projectors
        // keep them, not freshly compacted.
        let millions = Double(try await store.head().position) / 1_000_000
        row.disk = try await disk(client).mapValues { $0 / millions }
        row.disk["index"] = Double(try await IndexReader(client: client, logger: logger).diskBytes()) / millions
        row.rawRead = try await BenchReplay.rawRead(client, logger: logger)
        let rebuilt = try await ProjectionRebuild(client: client, logger: logger).run(.membership)
        row.membershipRebuild = Double(rebuilt.events) / rebuilt.elapsed.seconds
        let (taken, backup) = try await ScaleBackup(settings: settings, logger: logger).backup()
        row.backupPerMillion = backup.seconds / millions
        if ScaleBackup.roomToRestore(taken) {
            let restore = try await ScaleBackup.restore(
                taken, username: settings.username, password: settings.password, database: settings.database, logger: logger)
            row.restorePerMillion = restore.seconds / millions
        } else {
            deferred.add(taken.archive.folder)
            row.pendingRestore = taken
        }
        return row
    }

    /// p99 (ms) of each append's acknowledgement to the first index revision recorded covering
    /// it, once one covers the last (`BenchIndexAppends.lags`).
    private func indexLagP99(_ store: EventStore, acknowledged: [(position: Int64, at: Date)]) async throws -> Double {
        try await BenchIndexAppends.recorded(store, covering: acknowledged.map(\.position).max() ?? 0, within: .seconds(600))
        return Stats.percentile(try await BenchIndexAppends.lags(ledger.client, acknowledged: acknowledged), 0.99)
    }

    /// p99 (ms) of `GET /v1/audit/lookup?collaboration=` from 16 clients, 25 lookups each, every
    /// one of a different collaboration, drawn from positions spread over the log.
    private func lookupP99(_ store: EventStore, head: Int64) async throws -> Double {
        let drawn = (0..<2_000).map { _ in Int64.random(in: 1...head) }
        var ids: [String] = []
        for event in try await store.read(positions: Array(Set(drawn)).sorted()) {
            // The large collaboration lists more than one lookup's 10,000 events (a 400): not drawn.
            if let id = Streams.collaborationId(of: event.streamId), !ids.contains(id), event.version <= 10_000,
                (try await store.streamState(event.streamId)?.version ?? 0) <= 10_000
            {
                ids.append(id)
            }
            if ids.count == 400 { break }
        }
        guard ids.count >= 16 else { throw ValidationError("fewer than 16 collaborations among 2,000 positions drawn") }
        let each = ids.count / 16
        let auditor = "Bearer " + (try await ledger.authority.issue(account: "scale-auditor", roles: ["auditor"]))
        let (base, port) = (ledger.baseURL.absoluteString, ledger.baseURL.port ?? 80)
        var transports: [NIOTransport] = []
        for _ in 0..<16 { transports.append(try await NIOTransport.connect(host: "127.0.0.1", port: port)) }
        let (connections, chosen) = (transports, ids)
        let p99 = try await BenchVerify.timed(calls: Array(repeating: each, count: 16)) { c, n in
            var request = URLRequest(url: URL(string: base + "/v1/audit/lookup?collaboration=" + chosen[c * each + n])!)
            request.setValue(auditor, forHTTPHeaderField: "Authorization")
            let (_, status) = try await connections[c].send(request)
            guard status == 200 else { throw ValidationError("a lookup answered \(status)") }
        }.p99
        for transport in transports { await transport.close() }
        return p99
    }

    /// One phase of `ledger-bench load` at 16 clients, each its own account, once the views
    /// have caught up.
    private func load(_ phase: LoadPlan.Phase, account: String) async throws -> LoadProcess.Outcome {
        var tokens: [String] = []
        for c in 0..<16 { tokens.append(try await ledger.authority.issue(account: "\(account)-\(c)")) }
        let owner = phase == .proofs ? try await ledger.authority.issue(account: "\(account)-owner") : nil
        let plan = LoadPlan(baseURL: ledger.baseURL.absoluteString, phase: phase, seconds: seconds, tokens: tokens, ownerToken: owner)
        return try await LoadProcess.run(plan) { try await BenchCommands.caughtUp(ledger.client, logger: logger) }
    }

    /// p99 (ms) of full level-0 tiles and of full entry bundles (an auditor's, as served by
    /// default), fetched by 16 clients: up to 3,200 of each, every one a different tile, spread
    /// evenly over the full tiles of leaves `from ..< through`. A full tile is kept in memory after
    /// its first read, so each fetch here is a first read, at every size alike.
    private func tiles(from: Int64, through: Int64) async throws -> (Double, Double) {
        let (low, high) = (Int((from + 255) / 256), Int(through / 256))
        guard high - low >= 16 else { throw ValidationError("fewer than 16 full tiles between leaves \(from) and \(through)") }
        let each = min(200, (high - low) / 16)
        let stride = (high - low) / (each * 16)
        let auditor = "Bearer " + (try await ledger.authority.issue(account: "scale-auditor", roles: ["auditor"]))
        let base = ledger.baseURL.absoluteString
        let port = ledger.baseURL.port ?? 80
        var transports: [NIOTransport] = []
        for _ in 0..<16 { transports.append(try await NIOTransport.connect(host: "127.0.0.1", port: port)) }
        let connections = transports
        var p99: [Double] = []
        for level in [0, nil] as [Int?] {
            p99.append(
                try await BenchVerify.timed(calls: Array(repeating: each, count: 16)) { c, n in
                    let tile = Tile(level: level, index: Int64(low + (c * each + n) * stride), width: 256)
                    var request = URLRequest(url: URL(string: base + "/tlog/" + tile.path)!)
                    request.setValue(auditor, forHTTPHeaderField: "Authorization")
                    let (_, status) = try await connections[c].send(request)
                    guard status == 200 else { throw ValidationError("\(tile.path) answered \(status)") }
                }
                .p99)
        }
        for transport in transports { await transport.close() }
        return (p99[0], p99[1])
    }

    /// Bytes on disk, by part: the events' table and its indexes, the tree's table and its
    /// indexes, the views (every `proj_` table with its indexes) and the whole database.
    private func disk(_ client: PostgresClient) async throws -> [String: Double] {
        let rows = try await client.query(
            """
            SELECT pg_table_size('ledger_events'), pg_indexes_size('ledger_events'),
                   pg_table_size('ledger_tree_nodes'), pg_indexes_size('ledger_tree_nodes'),
                   (SELECT coalesce(sum(pg_total_relation_size(oid)), 0)::int8 FROM pg_class
                    WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace AND relname LIKE 'proj\\_%'),
                   pg_database_size(current_database())
            """, logger: logger)
        var parts: [String: Double] = [:]
        for try await (events, eventIndexes, tree, treeIndexes, views, database) in rows.decode(
            (Int64, Int64, Int64, Int64, Int64, Int64).self)
        {
            parts = [
                "events": Double(events), "event indexes": Double(eventIndexes), "tree": Double(tree),
                "tree indexes": Double(treeIndexes), "views": Double(views), "database": Double(database),
            ]
        }
        return parts
    }
}
