import LedgerDeviceSimulator
import LedgerDomain
import LedgerStore
import PostgresNIO

/// An event for store tests: type `type`, data `{"n": n}`.
public func event(_ type: String = "Tested", _ n: Int = 0) -> NewEvent {
    NewEvent(type: type, data: #"{"n":\#(n)}"#, metadata: #"{"actor":"test"}"#)
}

/// The number of events in the log.
public func count(_ client: PostgresClient) async throws -> Int64 {
    let rows = try await client.query("SELECT count(*) FROM ledger_events")
    for try await n in rows.decode(Int64.self) { return n }
    return -1
}

/// Appends a simulated collaboration's events to its stream, `chunk` events an append, each at
/// the version the one before left; the last append's result.
@discardableResult
public func append(_ collaboration: LogSimulator.Collaboration, to store: EventStore, chunk: Int) async throws -> AppendResult {
    var last: AppendResult?
    for start in stride(from: 0, to: collaboration.events.count, by: chunk) {
        let events = collaboration.events[start..<min(start + chunk, collaboration.events.count)]
        last = try await store.append(
            .init(
                streamId: Streams.collaboration(collaboration.id), expectedVersion: .exact(last?.version ?? 0),
                events: events.map { $0.newEvent(metadata: EventMetadata(actor: "sim")) }))
    }
    guard let last else { throw StoreError.invalidRequest("a simulated collaboration without events") }
    return last
}
