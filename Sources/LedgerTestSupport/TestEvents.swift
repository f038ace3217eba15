import LedgerDomain
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
