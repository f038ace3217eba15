import Logging
import PostgresNIO
import Synchronization

/// The queries waiting on each open connection, failed when it closes. One close callback per
/// connection (a callback per query would pile up on a connection that lives for days).
final class ClosedConnections: Sendable {
    static let shared = ClosedConnections()

    /// One answer: the query's, or the connection's close, whichever comes first.
    final class Race: Sendable {
        private enum State {
            case idle
            case waiting(CheckedContinuation<PostgresRowSequence, any Error>)
            /// Closed before the continuation was there.
            case failedEarly
            case done
        }
        private let state = Mutex<State>(.idle)

        /// False when the connection closed first (the continuation is resumed then).
        func begin(_ continuation: CheckedContinuation<PostgresRowSequence, any Error>) -> Bool {
            let closed = state.withLock { state -> Bool in
                guard case .idle = state else {
                    state = .done
                    return true
                }
                state = .waiting(continuation)
                return false
            }
            if closed { continuation.resume(throwing: ConnectionClosed()) }
            return !closed
        }

        func finish(_ result: Result<PostgresRowSequence, any Error>) {
            let waiting = state.withLock { state -> CheckedContinuation<PostgresRowSequence, any Error>? in
                switch state {
                case .waiting(let continuation):
                    state = .done
                    return continuation
                case .idle:
                    if case .failure = result { state = .failedEarly }
                    return nil
                case .failedEarly, .done:
                    return nil
                }
            }
            waiting?.resume(with: result)
        }
    }

    struct Waiter: Sendable {
        let connection: ObjectIdentifier
        let id: Int
        let race: Race
    }

    private struct State {
        var next = 0
        var waiting: [ObjectIdentifier: [Int: Race]] = [:]
    }
    private let state = Mutex(State())

    func watch(_ connection: PostgresConnection) -> Waiter {
        let key = ObjectIdentifier(connection)
        let race = Race()
        let (id, first) = state.withLock { state -> (Int, Bool) in
            state.next += 1
            let first = state.waiting[key] == nil
            state.waiting[key, default: [:]][state.next] = race
            return (state.next, first)
        }
        if first {
            // Runs at once if the connection is closed already.
            connection.closeFuture.whenComplete { _ in
                let races = self.state.withLock { $0.waiting.removeValue(forKey: key) } ?? [:]
                for race in races.values { race.finish(.failure(ConnectionClosed())) }
            }
        }
        return Waiter(connection: key, id: id, race: race)
    }

    func forget(_ waiter: Waiter) {
        state.withLock { state in _ = state.waiting[waiter.connection]?.removeValue(forKey: waiter.id) }
    }
}
