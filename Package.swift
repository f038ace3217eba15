// swift-tools-version:6.2
import PackageDescription

/// One settings array for every target (STYLE 2). Swift 6 language mode already makes
/// concurrency checking strict.
let swiftSettings: [SwiftSetting] = [
    // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0335-existential-any.md
    .enableUpcomingFeature("ExistentialAny"),
    // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0444-member-import-visibility.md
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "participant-ledger",
    // macOS 15 for the server targets (Synchronization); the SDK (LedgerClient, LedgerWire) is
    // for apps on every Apple platform.
    platforms: [.macOS(.v15), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .executable(name: "ledger", targets: ["LedgerCLI"]),
        .executable(name: "ledger-bench", targets: ["LedgerBenchCLI"]),
        .executable(name: "ledger-reliability", targets: ["LedgerReliability"]),
        .library(name: "LedgerClient", targets: ["LedgerClient"]),
        .library(name: "LedgerDomain", targets: ["LedgerDomain"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // HTTPTypes: Hummingbird's request and response types, which the API, the shard front and
        // the tests name themselves.
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
    ],
    targets: [
        // Wire types shared by the SDK and the server (share options, highlight kinds, JSON values, the
        // webhook signature, the error catalogue). Foundation and swift-crypto only.
        .target(
            name: "LedgerWire",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // The transparency log's math, pure: RFC 9162 Merkle trees and proofs, C2SP signed notes and
        // checkpoints. No I/O; the SDK may use it.
        .target(
            name: "TransparencyLog",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // `ledger witness`: a C2SP tlog-witness for others to run for our log.
        .target(
            name: "LedgerWitness",
            dependencies: [
                "TransparencyLog",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Pure domain: events, commands, the hash chain's leaf bytes, proof rules. No I/O.
        .target(
            name: "LedgerDomain",
            dependencies: ["LedgerWire", "TransparencyLog", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // The verifiable index (issue 67), pure: the map function over the log's leaves, the keys'
        // value chains, the Merkle prefix tree and its proofs over a small node store protocol.
        .target(
            name: "LedgerIndex",
            dependencies: ["LedgerDomain", "LedgerWire", "TransparencyLog", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // The verifiable index on PostgreSQL: the prefix tree's nodes by position and revision, each
        // key's list, and the log size they cover, written together in one transaction by the folder
        // that reads the log's leaves; the recorder keeps revisions and records them in the log.
        .target(
            name: "LedgerIndexStore",
            dependencies: [
                "LedgerIndex", "LedgerPostgres", "LedgerStore", "LedgerDomain",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The SQL, shipped as resources: numbered migrations (sql) and one file per function (functions).
        .target(
            name: "LedgerMigrations",
            path: "Migrations",
            resources: [.copy("sql"), .copy("functions")],
            swiftSettings: swiftSettings
        ),
        // PostgreSQL plumbing: the embedded cluster and its processes, connection settings,
        // queries and transactions that fail on a closed connection, deadlines, the watchdog,
        // LISTEN hubs, pool metrics. Nothing of the ledger's own.
        .target(
            name: "LedgerPostgres",
            dependencies: [
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // Writes past one primary (issue 49): which shard holds a collaboration, by PL/Proxy's rule
        // and from PL/Proxy's own cluster definition.
        .target(
            name: "LedgerShards",
            dependencies: [
                "LedgerPostgres", "LedgerDomain", "LedgerStore", "LedgerLog", "TransparencyLog", "LedgerWire",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // Every setting, read once into one typed value.
        .target(
            name: "LedgerConfiguration",
            dependencies: ["LedgerPostgres"],
            swiftSettings: swiftSettings
        ),
        // Every process's logging and metrics: the log handlers (text or JSON lines) and the
        // Prometheus registry `/metrics` renders.
        .target(
            name: "LedgerTelemetry",
            dependencies: [
                "LedgerConfiguration", "LedgerWire",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: swiftSettings
        ),
        // The tokens callers present: HS256 with the deployment's secret, or an identity
        // provider's keys (JWKS), and the caller a token's claims make.
        .target(
            name: "LedgerTokens",
            dependencies: [
                "LedgerDomain", "LedgerWire",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The store: the event log (append, reads, the collaborations' inline state), the migrator.
        .target(
            name: "LedgerStore",
            dependencies: [
                "LedgerDomain", "LedgerMigrations", "LedgerPostgres", "LedgerWire", "TransparencyLog",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Backups: the database's (base backup and WAL through a slot), the secrets sealed beside
        // it, the slot's name and how far each backup flushed, which the replication gate counts.
        .target(
            name: "LedgerBackup",
            dependencies: [
                "LedgerPostgres", "LedgerConfiguration",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The transparency log on PostgreSQL: the tree store, the checkpointer, log verification.
        // It depends on LedgerBackup for one rule, which slots are backups' and how far each has
        // flushed (BackupSlot, BackupPositions): the replication gate counts backups before a
        // checkpoint is signed, and the rule is written once, where backups are made. LedgerBackup
        // sits below the log (PostgreSQL plumbing and settings only), so no cycle comes of it.
        .target(
            name: "LedgerLog",
            dependencies: [
                "TransparencyLog", "LedgerDomain", "LedgerStore", "LedgerPostgres", "LedgerBackup", "LedgerWire",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Projections: projector workers, checkpoints and leases, rebuilds (the folds are SQL in Migrations).
        .target(
            name: "LedgerProjections",
            dependencies: [
                "LedgerDomain", "LedgerStore", "LedgerPostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The read model: every read the API serves (members, history, notices, audit, my
        // collaborations, the feed's starting point, the views' and expiry's health), paging
        // cursors, replica routing.
        .target(
            name: "LedgerReadModel",
            dependencies: [
                "LedgerDomain", "LedgerWire", "LedgerStore", "LedgerPostgres", "LedgerProjections",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Verifier: challenges, proof requests, the proof engine (read, decide, commit), the worker.
        .target(
            name: "LedgerVerifier",
            dependencies: [
                "LedgerDomain", "LedgerStore", "LedgerPostgres", "LedgerWire", "TransparencyLog",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Webhooks: the registry the API writes, and the delivery worker (signed POSTs, leases, backoff).
        .target(
            name: "LedgerWebhooks",
            dependencies: [
                "LedgerDomain", "LedgerWire", "LedgerStore", "LedgerPostgres",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The change feed's engine: the process's tail of the log, its subscribers, each client's stream.
        .target(
            name: "LedgerFeed",
            dependencies: [
                "LedgerDomain", "LedgerWire", "LedgerStore", "LedgerPostgres",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        // HTTP API: the router, decoding, auth, controllers, errors to statuses, the console. No SQL,
        // no workers: what runs beside it is LedgerApp's choice.
        .target(
            name: "LedgerAPI",
            dependencies: [
                "LedgerDomain", "LedgerWire", "TransparencyLog", "LedgerStore", "LedgerPostgres", "LedgerConfiguration", "LedgerLog",
                "LedgerReadModel", "LedgerVerifier", "LedgerWebhooks", "LedgerFeed", "LedgerTelemetry", "LedgerTokens", "LedgerConsole",
                "LedgerIndex", "LedgerIndexStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // What the API serves as files: the auditor's console (static pages that read the API with
        // the token they are given) and the OpenAPI contract. No Swift beyond finding them.
        .target(
            name: "LedgerConsole",
            resources: [.copy("openapi.yaml"), .copy("Console")],
            swiftSettings: swiftSettings
        ),
        // The shard front (docs/SCALING.md): one HTTP server before several shards' routers,
        // sending each request to the shard that holds its collaboration, fanning account-wide
        // reads and writes out over every shard (merged answers, the merged feed and its cursor),
        // and serving the top log's routes. With one shard it passes each request to that shard's
        // router, and the wire is one database's.
        .target(
            name: "LedgerShardFront",
            dependencies: [
                "LedgerAPI", "LedgerShards", "LedgerDomain", "LedgerWire", "LedgerFeed", "LedgerReadModel", "LedgerWebhooks",
                "TransparencyLog",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The composition root: one process type (LedgerProcess) running each role's services
        // (serve, api, verifier, project, deliver, checkpointer).
        .target(
            name: "LedgerApp",
            dependencies: [
                "LedgerAPI", "LedgerFeed", "LedgerDomain", "LedgerStore", "LedgerPostgres", "LedgerConfiguration", "LedgerLog",
                "LedgerVerifier", "LedgerProjections", "LedgerWebhooks", "TransparencyLog", "LedgerTokens", "LedgerShards",
                "LedgerShardFront", "LedgerIndexStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // Benchmarks (`ledger-bench …`): each prints its figures beside a baseline measured in the same run.
        .target(
            name: "LedgerBench",
            dependencies: [
                "LedgerWitness",
                "LedgerDomain", "LedgerWire", "TransparencyLog", "LedgerStore", "LedgerPostgres", "LedgerConfiguration", "LedgerLog",
                "LedgerApp", "LedgerReadModel", "LedgerProjections", "LedgerClient", "LedgerDeviceSimulator", "LedgerTelemetry",
                "LedgerTokens", "LedgerBackup", "LedgerIndex", "LedgerIndexStore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The benchmarks' executable, `ledger-bench`: the shipped `ledger` links none of them.
        .executableTarget(
            name: "LedgerBenchCLI",
            dependencies: ["LedgerBench", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: swiftSettings
        ),
        // Executable: argument parsing and service groups only.
        .executableTarget(
            name: "LedgerCLI",
            dependencies: [
                "LedgerDomain", "LedgerWire", "TransparencyLog", "LedgerStore", "LedgerPostgres", "LedgerConfiguration", "LedgerLog",
                "LedgerBackup", "LedgerApp", "LedgerReadModel", "LedgerProjections", "LedgerClient",
                "LedgerDeviceSimulator", "LedgerWitness", "LedgerTelemetry", "LedgerTokens", "LedgerShards", "LedgerIndex",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        // The reliability suite (scripts/reliability): roles as processes, load, faults, counts.
        .executableTarget(
            name: "LedgerReliability",
            dependencies: [
                "LedgerStore", "LedgerPostgres", "LedgerLog", "LedgerProjections", "LedgerClient", "LedgerDeviceSimulator",
                "LedgerConfiguration", "LedgerTokens",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Simulated recipient devices: keys, diversification, padded Merkle trees, proofs.
        .target(
            name: "LedgerDeviceSimulator",
            dependencies: ["LedgerDomain", "LedgerWire", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // Client SDK for apps: Foundation, the wire types and the log's math only, no server targets.
        .target(
            name: "LedgerClient",
            dependencies: ["LedgerWire", "LedgerDomain", "TransparencyLog", "LedgerIndex"],
            swiftSettings: swiftSettings
        ),
        // Test support: a throwaway PostgreSQL cluster and per-test databases, the router harness,
        // a live server, HTTP over AsyncHTTPClient (TestHTTP), access windows, the repository's root.
        .target(
            name: "LedgerTestSupport",
            dependencies: [
                "LedgerStore", "LedgerPostgres", "LedgerAPI", "LedgerApp", "LedgerFeed", "LedgerConfiguration", "LedgerDomain",
                "LedgerWire",
                "LedgerLog", "LedgerDeviceSimulator", "TransparencyLog", "LedgerClient", "LedgerVerifier", "LedgerProjections",
                "LedgerWebhooks", "LedgerWitness", "LedgerTelemetry", "LedgerTokens",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerTelemetryTests",
            dependencies: ["LedgerTelemetry", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerTokensTests",
            dependencies: ["LedgerTokens", "LedgerDomain", "LedgerWire"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerFeedTests",
            dependencies: [
                "LedgerFeed", "LedgerStore", "LedgerPostgres", "LedgerConfiguration", "LedgerDomain", "LedgerWire", "LedgerTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The shipped binary as a process: configuration, backups and restores, roles across processes;
        // the files shipped beside it (docker-compose.yml, the alert rules and the dashboard).
        .testTarget(
            name: "LedgerCLITests",
            dependencies: [
                "LedgerClient", "LedgerConfiguration", "LedgerDeviceSimulator", "LedgerDomain", "LedgerPostgres", "LedgerProjections",
                "LedgerTestSupport", "LedgerTokens", "TransparencyLog", "LedgerStore", "LedgerWire",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerAppTests",
            dependencies: [
                "LedgerApp", "LedgerAPI", "LedgerConfiguration", "LedgerFeed", "LedgerLog", "LedgerPostgres", "LedgerProjections",
                "LedgerStore", "LedgerTokens", "LedgerVerifier", "LedgerWebhooks", "TransparencyLog",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerWireTests",
            dependencies: ["LedgerWire"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TransparencyLogTests",
            dependencies: ["TransparencyLog", .product(name: "Crypto", package: "swift-crypto")],
            // RFC 6962 Merkle vectors: a clone passes without ../shared.
            resources: [.copy("Vectors")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerDomainTests",
            dependencies: [
                "LedgerDomain", "LedgerWire", "TransparencyLog", "LedgerDeviceSimulator", .product(name: "Crypto", package: "swift-crypto"),
            ],
            // Wycheproof ECDSA vectors: a clone passes without ../shared.
            resources: [.copy("Vectors")],
            swiftSettings: swiftSettings
        ),
        // The index against a brute-force tree, every tampered proof refused, and the Python
        // reimplementation (scripts/index-check) agreeing on a simulated log's roots.
        .testTarget(
            name: "LedgerIndexTests",
            dependencies: [
                "LedgerIndex", "LedgerDomain", "LedgerDeviceSimulator", "TransparencyLog",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // The index on a real PostgreSQL: roots equal to the in-memory index's after every batch,
        // a batch cut short leaving the previous size and root, folders racing, least privilege.
        .testTarget(
            name: "LedgerIndexStoreTests",
            dependencies: [
                "LedgerIndexStore", "LedgerIndex", "LedgerStore", "LedgerPostgres", "LedgerTestSupport", "LedgerDomain",
                "LedgerDeviceSimulator",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerDeviceSimulatorTests",
            dependencies: ["LedgerDeviceSimulator", "LedgerDomain", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerPostgresTests",
            dependencies: [
                "LedgerPostgres", "LedgerTestSupport", "LedgerStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerConfigurationTests",
            dependencies: ["LedgerConfiguration", "LedgerPostgres"],
            swiftSettings: swiftSettings
        ),
        // The repository's own rules, read from its files, pure: every test's name fits on a line.
        .testTarget(
            name: "RepositoryTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerStoreTests",
            dependencies: [
                "LedgerStore", "LedgerLog", "LedgerPostgres", "LedgerTestSupport", "LedgerDomain", "LedgerMigrations",
                "LedgerClient", "LedgerDeviceSimulator", "LedgerWire",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // A database as the previous release left it, for the upgrade test.
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        // Backup slots' names, pure.
        .testTarget(
            name: "LedgerBackupTests",
            dependencies: ["LedgerBackup"],
            swiftSettings: swiftSettings
        ),
        // The log on PostgreSQL, and the checkpointer publishing through witnesses and refusing
        // forks, on a live server.
        .testTarget(
            name: "LedgerLogTests",
            dependencies: [
                "LedgerLog", "TransparencyLog", "LedgerStore", "LedgerPostgres", "LedgerTestSupport", "LedgerDomain", "LedgerClient",
                "LedgerConfiguration", "LedgerBackup", "LedgerWire",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // `ledger witness serve`, the real binary and in this process.
        .testTarget(
            name: "LedgerWitnessTests",
            dependencies: [
                "LedgerWitness", "LedgerTestSupport", "LedgerPostgres", "TransparencyLog",
                .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerShardsTests",
            dependencies: [
                "LedgerShards", "LedgerPostgres", "LedgerTestSupport", "LedgerApp", "LedgerClient", "LedgerDeviceSimulator", "LedgerTokens",
                "LedgerTelemetry", "LedgerConfiguration", "TransparencyLog", "LedgerDomain", "LedgerAPI", "LedgerWebhooks", "LedgerWire",
                "LedgerIndex", "LedgerStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The shard front's routing, feed merging and fan-outs cut short, pure (its fan-outs run in LedgerShardsTests' live shards).
        .testTarget(
            name: "LedgerShardFrontTests",
            dependencies: [
                "LedgerShardFront", "LedgerAPI", "LedgerShards", "LedgerFeed", "LedgerDomain", "LedgerWire", "LedgerWebhooks",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerProjectionsTests",
            dependencies: [
                "LedgerProjections", "LedgerReadModel", "LedgerStore", "LedgerPostgres", "LedgerDomain", "LedgerDeviceSimulator",
                "LedgerTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerReadModelTests",
            dependencies: [
                "LedgerReadModel", "LedgerProjections", "LedgerStore", "LedgerPostgres", "LedgerDomain", "LedgerWire",
                "LedgerDeviceSimulator", "LedgerTestSupport", "LedgerApp", "LedgerClient", "LedgerConfiguration", "LedgerTokens",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerVerifierTests",
            dependencies: [
                "LedgerVerifier", "LedgerAPI", "LedgerFeed", "LedgerStore", "LedgerPostgres", "LedgerDomain", "LedgerWire",
                "LedgerDeviceSimulator", "LedgerTokens", "LedgerApp",
                "LedgerTestSupport", "LedgerConfiguration", "TransparencyLog",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerWebhooksTests",
            dependencies: [
                "LedgerWebhooks", "LedgerClient", "LedgerStore", "LedgerPostgres", "LedgerDomain", "LedgerWire",
                "LedgerDeviceSimulator", "LedgerTestSupport", "LedgerConfiguration",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LedgerAPITests",
            dependencies: [
                "LedgerAPI", "LedgerStore", "LedgerPostgres", "LedgerConfiguration", "LedgerLog", "LedgerVerifier", "LedgerProjections",
                "LedgerTokens",
                "LedgerReadModel", "LedgerTestSupport", "LedgerDomain", "LedgerWire", "TransparencyLog", "LedgerDeviceSimulator",
                "LedgerClient", "LedgerWebhooks", "LedgerConsole", "LedgerFeed", "LedgerApp", "LedgerIndex",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["Go", "Console"],
            swiftSettings: swiftSettings
        ),
        // The SDK against a live server (the services `ledger serve` runs, on a real port).
        .testTarget(
            name: "LedgerClientTests",
            dependencies: [
                "LedgerClient", "LedgerApp", "LedgerStore", "LedgerPostgres", "LedgerConfiguration", "LedgerLog", "LedgerProjections",
                "LedgerTokens",
                "LedgerWebhooks", "LedgerTestSupport", "LedgerDeviceSimulator", "LedgerDomain", "LedgerWire", "TransparencyLog",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
