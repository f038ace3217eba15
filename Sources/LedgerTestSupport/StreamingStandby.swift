import Foundation
import LedgerConfiguration
import LedgerPostgres
import LedgerStore
import Logging

/// A primary of the test's own, migrated, and a real streaming-replication hot standby of it
/// (`pg_basebackup -R`, through the replication slot `slot` if given), both on loopback; `body`
/// gets the primary's owner settings, the standby and the standby's owner settings. Both are
/// stopped afterwards, however `body` ends.
public func withPrimaryAndStandby<T: Sendable>(
    slot: String? = nil, logger: Logger,
    _ body: (DatabaseSettings, EmbeddedPostgres, DatabaseSettings) async throws -> T
) async throws -> T {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-standby-\(UUID().uuidString.prefix(8))")
    defer { try? FileManager.default.removeItem(at: folder) }
    let primary = EmbeddedPostgres(
        options: .init(dataDirectory: folder.appendingPathComponent("primary"), binaries: Setting.pgBin.value()), logger: logger)
    let standby = EmbeddedPostgres(
        options: .init(dataDirectory: folder.appendingPathComponent("standby"), binaries: Setting.pgBin.value()), logger: logger)
    let result: T
    do {
        let (owner, standbyOwner) = try await ClusterStarts.shared.run {
            let owner = try await primary.start()
            try await withClient(owner) { try await Migrator(client: $0, logger: logger).migrate() }
            return (owner, try await standby.startStandby(of: owner, slot: slot))
        }
        result = try await body(owner, standby, standbyOwner)
    } catch {
        try? await standby.stop()
        try? await primary.stop()
        throw error
    }
    try? await standby.stop()
    try await primary.stop()
    return result
}
