import Foundation
import LedgerConfiguration
import LedgerPostgres
import LedgerStore
import Logging

/// A PostgreSQL cluster of the test's own, migrated, which the test may stop and start again
/// (`stopImmediately`, `startAgain`: same port) without touching the shared test cluster; `body`
/// gets its owner's settings. Stopped afterwards, however `body` ends.
public func withOwnCluster<T: Sendable>(
    logger: Logger, _ body: (DatabaseSettings, EmbeddedPostgres) async throws -> T
) async throws -> T {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-own-\(UUID().uuidString.prefix(8))")
    defer { try? FileManager.default.removeItem(at: folder) }
    let cluster = EmbeddedPostgres(options: .init(dataDirectory: folder, binaries: Setting.pgBin.value()), logger: logger)
    let result: T
    do {
        let owner = try await ClusterStarts.shared.run {
            let owner = try await cluster.start()
            try await withClient(owner) { try await Migrator(client: $0, logger: logger).migrate() }
            return owner
        }
        result = try await body(owner, cluster)
    } catch {
        try? await cluster.stop()
        throw error
    }
    try await cluster.stop()
    return result
}
