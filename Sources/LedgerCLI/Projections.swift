import ArgumentParser
import Foundation
import LedgerApp
import LedgerConfiguration
import LedgerPostgres
import LedgerProjections
import LedgerStore
import Logging
import PostgresNIO
import TransparencyLog

struct Project: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "project",
        abstract:
            "Run a projector worker and the expiry service: fold the log into the views, append expiries (any number may run; leases keep one owner of each)."
    )

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        try await Role(.project, configuration: try database.configuration()).run()
    }
}

struct Projections: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Inspect, verify and rebuild the projections.", subcommands: [Status.self, Verify.self, Rebuild.self])

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Each projection's position, lag in events and seconds, owner and state.")
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let statuses = try await database.withClient { client, logger in
                try await ProjectionQueries.status(client: client, logger: logger)
            }
            Table(
                ["projection", "position", "head", "lag (events)", "lag (s)", "owner", "state"],
                statuses.map { s in
                    [
                        s.name, String(s.position), String(s.head), String(s.lagEvents), String(format: "%.1f", s.lagSeconds),
                        s.owner.map { $0 + (s.leaseValid ? "" : " (lease expired)") } ?? "-",
                        s.status == "running" ? "running" : "STOPPED at \(s.errorPosition ?? 0): \(s.error ?? "")",
                    ]
                }
            ).print()
            if statuses.contains(where: { $0.status != "running" }) { throw ExitCode(3) }
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check that each view equals the domain's fold of the log up to its checkpoint; exit 1 naming what differs.")
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let report = try await database.withClient { client, logger in
                try await ViewAudit(client: client, store: EventStore(client: client, logger: logger), logger: logger).run()
            }
            let at = Projection.allCases.map { "\($0.rawValue) at \(report.positions[$0] ?? 0)" }.joined(separator: ", ")
            if report.consistent {
                print("views consistent with the log (\(at)); \(report.collaborations) collaboration(s) folded")
                return
            }
            print("views DIVERGE from the log (\(at)): \(report.diverged) difference(s)")
            for line in report.details { print("  " + line) }
            print("`ledger projections rebuild NAME` replays the log into a fresh copy of a view.")
            throw ExitCode(1)
        }
    }

    struct Rebuild: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replay the whole log into a fresh copy of a projection while the current one serves, then swap.")
        @Argument(help: "Projection: \(Projection.allCases.map(\.rawValue).joined(separator: ", ")), or all.") var name: String
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let projections: [Projection]
            if name == "all" {
                projections = Projection.allCases
            } else {
                guard let projection = Projection(rawValue: name) else {
                    throw ValidationError(
                        "unknown projection \(name); known: \(Projection.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                projections = [projection]
            }
            try await database.withClient { client, logger in
                try await Migrator(client: client, logger: logger).ensureCurrent()
                for projection in projections {
                    let bar = ProgressBar(title: projection.rawValue)
                    let report = try await ProjectionRebuild(client: client, logger: logger).run(projection) { bar.update($0) }
                    bar.finish()
                    print(
                        String(
                            format: "%@: rebuilt up to position %lld in %.1f s (%.0f events/s) and swapped in",
                            projection.rawValue, report.position, report.elapsed.seconds,
                            Double(report.events) / max(report.elapsed.seconds, 0.001)))
                }
            }
        }
    }
}

/// Events done, rate and time left on one line of a terminal (stderr); silent otherwise.
final class ProgressBar: Sendable {
    let title: String
    let enabled = isatty(STDERR_FILENO) != 0

    init(title: String) { self.title = title }

    func update(_ progress: ProjectionRebuild.Progress) {
        guard enabled, progress.total > 0 else { return }
        let fraction = Double(progress.done) / Double(progress.total)
        let width = 30
        let filled = Int(fraction * Double(width))
        let rate = Double(progress.done) / max(progress.elapsed.seconds, 0.001)
        let left = rate > 0 ? Double(progress.total - progress.done) / rate : 0
        let line = String(
            format: "\r%@ [%@%@] %lld/%lld events  %.0f/s  %.0fs left ", title, String(repeating: "#", count: filled),
            String(repeating: ".", count: width - filled), progress.done, progress.total, rate, left)
        FileHandle.standardError.write(Data(line.utf8))
    }

    func finish() {
        if enabled { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
