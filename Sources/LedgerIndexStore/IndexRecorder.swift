import Foundation
import LedgerDomain
import LedgerIndex
import LedgerPostgres
import LedgerStore
import Logging
import PostgresNIO
import ServiceLifecycle

/// Keeps the index folded and records its revisions in the log (docs/TRUST.md, "The verifiable
/// index", "Revision records"): every `interval` it folds the log up to its head (`IndexFolder`),
/// and when `recordEvery` has passed since its last record, keeps the index's revision and
/// records it as an `IndexRevisionRecorded` event of `ledger-index`, which the next checkpoint
/// covers and witnesses cosign like any other event. A log that gained nothing but records since
/// the last one gains no record: an idle ledger stays idle.
///
/// **Kept before recorded.** A revision's nodes are kept (`ledger_index_state.kept_size`, set
/// under the state row's lock, so no fold is in between) before its record is appended, so
/// every recorded revision is provable from then on; a crash between the two keeps a revision
/// nobody recorded, which costs only its rows.
///
/// **Records rise strictly.** A record is appended with the stream's version as its expected
/// version, and only above the last record's size: two recorders (two `ledger serve`) racing
/// append one record, the other's append fails and it reads the winner's next round.
public struct IndexRecorder: Service {
    let client: PostgresClient
    let events: EventStore
    let folder: IndexFolder
    let interval: Duration
    let recordEvery: Duration
    let logger: Logger

    public init(
        client: PostgresClient, events: EventStore, interval: Duration = .milliseconds(200), recordEvery: Duration = .seconds(1),
        batchSize: Int = 5_000, logger: Logger
    ) {
        (self.client, self.events, self.interval, self.recordEvery, self.logger) = (client, events, interval, recordEvery, logger)
        folder = IndexFolder(client: client, logger: logger, batchSize: batchSize)
    }

    public func run() async throws {
        let clock = ContinuousClock()
        var recorded = clock.now - recordEvery
        // While rounds fail (a database down), one line at first and then one every 30 s, not five a second.
        var failing: ContinuousClock.Instant?
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                // Bounded by the record's time: under steady appends a fold nearly always finds more.
                _ = try await folder.catchUp(until: recorded + recordEvery)
                if clock.now - recorded >= recordEvery {
                    recorded = clock.now
                    try await record()
                }
                if failing != nil { logger.info("index: folding and recording again") }
                failing = nil
            } catch {
                if failing.map({ clock.now - $0 >= .seconds(30) }) ?? true {
                    failing = clock.now
                    logger.warning(
                        "index: the log is not folded into the index, or its revision not recorded; trying again every \(interval)",
                        metadata: ["error": "\(DatabaseFailure.describe(error))"])
                }
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// Keeps the index's revision and records it, unless the last record covers as much; the
    /// revision recorded by this call, or nil (nothing new, a folder at work, or another
    /// recorder first).
    @discardableResult
    public func record() async throws -> IndexRevision? {
        let kept: IndexState? = try await client.transaction(logger: logger) { connection in
            guard let (state, keptSize) = try await IndexTables.lockState(on: connection, logger: logger) else { return nil }
            if state.logSize > keptSize { try await IndexTables.keep(state, on: connection, logger: logger) }
            return state
        }
        guard let kept, kept.logSize > 0 else { return nil }
        let revision = try IndexRevision(logSize: kept.logSize, root: kept.root)
        let stream = try await events.streamState(IndexRevision.stream)
        if let data = stream?.state {
            let last = try IndexRevision(streamId: IndexRevision.stream, type: IndexRevision.type, data: data)
            // Records alone since the last one: nothing to record (each record is an event, so
            // an idle log would otherwise gain one every round).
            guard last.logSize < revision.logSize,
                try await client.withConnection({
                    try await IndexTables.namesAnything(after: last.logSize, through: revision.logSize, on: $0, logger: logger)
                })
            else { return nil }
        }
        let event = NewEvent(
            eventId: Identifiers.derivedUUID("index-revision\u{0}\(revision.logSize)"), type: IndexRevision.type, data: revision.data)
        do {
            _ = try await events.append(
                .init(
                    streamId: IndexRevision.stream, expectedVersion: .exact(stream?.version ?? 0), events: [event], state: revision.data))
        } catch let error as StoreError where error.isVersionConflict || error.isIdempotencyMismatch {
            return nil  // another recorder first: the next round reads what it recorded
        }
        return revision
    }
}
