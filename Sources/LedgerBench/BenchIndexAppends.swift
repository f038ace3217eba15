import ArgumentParser
import Foundation
import LedgerDomain
import LedgerIndex
import LedgerIndexStore
import LedgerPostgres
import LedgerStore
import LedgerTelemetry
import Logging
import PostgresNIO

/// The verifiable index's cost on the write path (issue 67, item 6): appends at 16 writers with
/// the index recorder running (`IndexRecorder`, as `ledger serve` runs it), beside the same
/// appends without it, rounds alternating; and the index lag, an append's acknowledgement to the
/// recording of the first revision that covers it.
struct BenchIndexAppends: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index-appends",
        abstract:
            "Appends at 16 writers with the index recorder on, beside the same run without it (ratio, target 0.9); the index lag p50/p99 (target p99 within 2 s).",
        discussion: """
            Each round appends single events for --seconds with the recorder stopped, then (once it \
            has caught up, untimed) for --seconds with it running, or the other way round in every \
            other round. The writers' events are a collaboration's (a new one every 30 events), each \
            naming one of five identities, so the index folds the keys it would in use. The lag is \
            measured for every append of the recorder's phases: its acknowledgement to the \
            `recorded_at` of the first `IndexRevisionRecorded` whose size covers it.
            """)

    @OptionGroup var target: BenchTarget
    @Option(help: "Rounds (each an off and an on phase).") var rounds = 3
    @Option(help: "Seconds of each phase.") var seconds = 10.0
    @Option(help: "Writers.") var writers = 16
    @Option(help: "Milliseconds between the recorder's folds (IndexRecorder's interval; it records about once a second).")
    var foldEvery = 200

    func validate() throws {
        guard rounds >= 1, seconds >= 1, writers >= 1, (10...10_000).contains(foldEvery) else {
            throw ValidationError("--rounds, --seconds and --writers at least 1; --fold-every 10 to 10,000 ms")
        }
    }

    func run() async throws {
        let quiet = Logs.quiet()
        let (rounds, seconds, writers, interval) = (rounds, seconds, writers, Duration.milliseconds(foldEvery))
        try await target.run(logger: quiet) { settings in
            try await settings.withClient(logger: quiet, maxConnections: 40) { client in
                let store = EventStore(client: client, logger: quiet)
                print("ledger bench index-appends: \(rounds) rounds of \(Int(seconds)) s off and on, \(writers) writers")
                print("  the recorder folds every \(interval), records about once a second")
                var rates: [String: [Double]] = [:]
                var acknowledged: [(position: Int64, at: Date)] = []
                for round in 1...rounds {
                    for on in round % 2 == 1 ? [false, true] : [true, false] {
                        let (rate, acks) = try await Self.phase(
                            client, store: store, recorder: on ? interval : nil, writers: writers, tag: "r\(round)\(on ? "on" : "off")",
                            seconds: seconds, logger: quiet)
                        rates[on ? "on" : "off", default: []].append(rate)
                        if on { acknowledged += acks }
                    }
                    print(String(format: "  round %d: off %.0f events/s, on %.0f events/s", round, rates["off"]!.last!, rates["on"]!.last!))
                }
                let (off, on) = (Stats.median(rates["off"]!), Stats.median(rates["on"]!))
                let lags = try await Self.lags(client, acknowledged: acknowledged)
                print("")
                print(
                    String(
                        format: "  single-event appends, %d writers: index off %.0f events/s, on %.0f events/s   ratio %.2f (target 0.9)",
                        writers, off, on, on / off))
                print(
                    String(
                        format:
                            "  index lag, acknowledgement to the first covering revision recorded: p50 %.0f ms, p99 %.0f ms, max %.0f ms (%d appends)",
                        Stats.percentile(lags, 0.5), Stats.percentile(lags, 0.99), lags.last ?? 0, lags.count))
            }
        }
    }

    /// One phase: the recorder caught up and running, folding every `recorder` (nil: stopped),
    /// while `writers` append for `seconds`.
    static func phase(
        _ client: PostgresClient, store: EventStore, recorder interval: Duration?, writers: Int, tag: String, seconds: Double,
        logger: Logger
    ) async throws -> (Double, [(position: Int64, at: Date)]) {
        guard let interval else { return try await appends(store, writers: writers, tag: tag, seconds: seconds) }
        _ = try await IndexFolder(client: client, logger: logger).catchUp()
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await IndexRecorder(client: client, events: store, interval: interval, logger: logger).run() }
            defer { group.cancelAll() }
            let measured = try await appends(store, writers: writers, tag: tag, seconds: seconds)
            // Running until a record covers the phase's last append, so every lag is the recorder's own.
            try await recorded(store, covering: measured.1.map(\.position).max() ?? 0, within: .seconds(60))
            return measured
        }
    }

    /// Waits until a recorded revision covers `position` (polling every 20 ms); throws after `limit`.
    static func recorded(_ store: EventStore, covering position: Int64, within limit: Duration) async throws {
        try await LoadProcess.poll("an index revision covering \(position) recorded", within: limit, every: .milliseconds(20)) {
            try await recordedSize(store) >= position
        }
    }

    /// The size of the last revision recorded (0: none).
    static func recordedSize(_ store: EventStore) async throws -> Int64 {
        guard let data = try await store.streamState(IndexRevision.stream)?.state else { return 0 }
        return try IndexRevision(streamId: IndexRevision.stream, type: IndexRevision.type, data: data).logSize
    }

    /// Events per second appended by `writers` tasks for `seconds`, each event a collaboration's
    /// naming one of five identities; and each append's position and acknowledgement time.
    static func appends(
        _ store: EventStore, writers: Int, tag: String, seconds: Double
    ) async throws -> (Double, [(position: Int64, at: Date)]) {
        let identities = (0..<5).map { n in Data((0..<32).map { UInt8(truncatingIfNeeded: $0 * 7 + n) }).base64EncodedString() }
        let meta = EventMetadata(actor: "bench", requestId: UUID().uuidString).json()
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + .milliseconds(Int(seconds * 1000))
        let (total, acks) = try await withThrowingTaskGroup(of: (Int, [(position: Int64, at: Date)]).self) { group in
            for w in 0..<writers {
                group.addTask {
                    var (count, version) = (0, Int64(0))
                    var acks: [(position: Int64, at: Date)] = []
                    while clock.now < deadline {
                        if count % 30 == 0 { version = 0 }
                        let stream = Streams.collaboration("bench-\(tag)-\(w)-\(count / 30)")
                        let data = #"{"rootHash":"\#(identities[count % identities.count])","kind":"bench"}"#
                        let event = NewEvent(type: "IdentityAdded", data: data, metadata: meta)
                        let result = try await store.append(
                            .init(streamId: stream, expectedVersion: version == 0 ? .noStream : .exact(version), events: [event]))
                        acks.append((result.lastPosition, Date()))
                        (version, count) = (result.version, count + 1)
                    }
                    return (count, acks)
                }
            }
            return try await group.reduce((0, [])) { ($0.0 + $1.0, $0.1 + $1.1) }
        }
        return (Double(total) / (clock.now - start).seconds, acks)
    }

    /// Each append's lag (ms, sorted) to the recording of the first revision covering it.
    static func lags(_ client: PostgresClient, acknowledged: [(position: Int64, at: Date)]) async throws -> [Double] {
        var records: [(size: Int64, at: Double)] = []
        let rows = try await client.query(
            """
            SELECT data::text, extract(epoch FROM recorded_at)::float8 FROM ledger_events
            WHERE stream_id = \(IndexRevision.stream) ORDER BY version
            """)
        for try await (data, at) in rows.decode((String, Double).self) {
            records.append((try IndexRevision(streamId: IndexRevision.stream, type: IndexRevision.type, data: data).logSize, at))
        }
        var lags: [Double] = []
        for ack in acknowledged {
            guard let covering = records.first(where: { $0.size >= ack.position }) else { continue }
            lags.append((covering.at - ack.at.timeIntervalSince1970) * 1000)
        }
        return lags.sorted()
    }
}
