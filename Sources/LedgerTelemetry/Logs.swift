import LedgerConfiguration
import Logging

/// The process's logging, set up once at start.
public enum Logs {
    /// Logs to stderr: `key=value` text, or one JSON object per line (`LEDGER_LOG_FORMAT=json`);
    /// least severe level `LEDGER_LOG_LEVEL`.
    public static func bootstrap(_ configuration: LedgerConfiguration) -> Logger {
        let level = Logger.Level(rawValue: configuration.logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler =
                configuration.jsonLogs ? JSONLogHandler(label: label) : StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: "ledger")
    }

    /// Bootstraps logging and returns a logger showing warnings and worse only (benchmarks,
    /// the demo: their output is the report, not the ledger's info lines).
    public static func quiet(_ configuration: LedgerConfiguration = LedgerConfiguration()) -> Logger {
        var logger = bootstrap(configuration)
        logger.logLevel = .warning
        return logger
    }
}
