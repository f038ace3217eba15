import ArgumentParser
import Foundation
import LedgerApp
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
    let logger: Logger

    func measure() async throws -> ScaleRow {
        let client = ledger.client
        let store = EventStore(client: client, logger: logger)
        let head = try await store.head().position
        var row = ScaleRow(events: head)
        row.pgbench16 = try await Pgbench.rate(try Pgbench.path(), settings, clients: 16, seconds: seconds)
        let (appends, _, acknowledged) = try await BenchAppend.appendRate(
            store, writers: 16, batch: 1, tag: "scale-\(head)", seconds: seconds)
        row.appends16 = appends
        let (lags, _) = try await BenchAppend.checkpointLags(client, store: store, acknowledged: acknowledged)
        row.ackToCheckpointP99 = lags.isEmpty ? 0 : lags[min(lags.count - 1, Int(Double(lags.count) * 0.99))]
        row.starts = try await load(.starts, account: "scale-starts-\(head)").rate
        row.proofsP99 = try await load(.proofs, account: "scale-proofs-\(head)").p99
        try await BenchCommands.caughtUp(client, logger: logger)
        let asOf = try await BenchReplay.asOfLatency(client, store: store, logger: logger, queries: 200)
        (row.asOfFirstPageP99, row.asOfUnpagedP99) = (asOf.first.1, asOf.unpaged.1)
        let signed = try await LogTree(client: client, logger: logger).latestCheckpoint()?.size ?? 0
        (row.tileP99, row.bundleP99) = try await tiles(size: signed)
        row.rawRead = try await BenchReplay.rawRead(client, logger: logger)
        let rebuilt = try await ProjectionRebuild(client: client, logger: logger).run(.membership)
        row.membershipRebuild = Double(rebuilt.events) / rebuilt.elapsed.seconds
        let millions = Double(try await store.head().position) / 1_000_000
        let (taken, backup) = try await ScaleBackup(settings: settings, logger: logger).backup()
        row.backupPerMillion = backup.seconds / millions
        if ScaleBackup.roomToRestore(taken) {
            let restore = try await ScaleBackup.restore(
                taken, username: settings.username, password: settings.password, database: settings.database, logger: logger)
            row.restorePerMillion = restore.seconds / millions
        } else {
            row.pendingRestore = taken
        }
        row.disk = try await disk(client).mapValues { $0 / millions }
        return row
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
    /// default), each fetched 4,000 times by 16 clients at places spread over the whole log (a
    /// tree of `size` leaves).
    private func tiles(size: Int64) async throws -> (Double, Double) {
        let auditor = "Bearer " + (try await ledger.authority.issue(account: "scale-auditor", roles: ["auditor"]))
        let base = ledger.baseURL.absoluteString
        let port = ledger.baseURL.port ?? 80
        var transports: [NIOTransport] = []
        for _ in 0..<16 { transports.append(try await NIOTransport.connect(host: "127.0.0.1", port: port)) }
        let connections = transports
        let full = Int(size / 256)
        guard full > 0 else { throw ValidationError("no full tile in a tree of \(size) leaves") }
        var p99: [Double] = []
        for level in [0, nil] as [Int?] {
            p99.append(
                try await BenchVerify.timed(calls: Array(repeating: 250, count: 16)) { c, n in
                    let tile = Tile(level: level, index: Int64((c * 7919 + n * 104_729) % full), width: 256)
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
