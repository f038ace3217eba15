import Synchronization

/// A hand-over point between a caller of `GroupQueue` and the group's leader. Each `resolve`
/// is consumed by one `wait`; a waiter may be told "lead" first and "done" later.
final class Ticket<Value: Sendable>: Sendable {
    private enum State {
        case waiting(CheckedContinuation<Value, Never>?)
        case resolved(Value)
    }
    private let state = Mutex<State>(.waiting(nil))

    func wait() async -> Value {
        await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
            let ready: Value? = state.withLock { state in
                switch state {
                case .resolved(let value):
                    state = .waiting(nil)
                    return value
                case .waiting:
                    state = .waiting(continuation)
                    return nil
                }
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    func resolve(_ value: Value) {
        let continuation: CheckedContinuation<Value, Never>? = state.withLock { state in
            switch state {
            case .waiting(let continuation?):
                state = .waiting(nil)
                return continuation
            case .waiting(nil):
                state = .resolved(value)
                return nil
            case .resolved:
                preconditionFailure("ticket resolved twice before it was read")
            }
        }
        continuation?.resume(returning: value)
    }
}
