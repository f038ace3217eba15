import Synchronization

/// A level-triggered flag with an async wait bounded by a timeout.
package final class Signal: Sendable {
    private struct State {
        var raised = false
        var waiter: CheckedContinuation<Bool, Never>?
        var generation = 0
    }
    private let state = Mutex<State>(State())

    package init() {}

    /// Lowers the flag if raised: a raise before this call wakes no later wait.
    package func lower() {
        state.withLock { $0.raised = false }
    }

    package func raise() {
        let waiter: CheckedContinuation<Bool, Never>? = state.withLock { state in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.raised = true
            return nil
        }
        waiter?.resume(returning: true)
    }

    /// True if raised (now or before the wait), false after `timeout` or on cancellation.
    package func wait(timeout: Duration) async -> Bool {
        await wait(timeout: timeout, clock: ContinuousClock())
    }

    /// The same, the timeout measured on `clock`.
    package func wait<C: Clock>(timeout: C.Duration, clock: C) async -> Bool {
        await withTaskGroup(of: Void.self) { group in
            let generation = nextGeneration()
            group.addTask {
                try? await clock.sleep(for: timeout)
                self.expire(generation)
            }
            let result = await waiting(generation)
            group.cancelAll()
            return result
        }
    }

    /// True if raised (now or before the wait), false on cancellation. No timer (a wait with a
    /// timeout costs a sleeping child task): for waiters that something else wakes in time.
    package func wait() async -> Bool {
        await waiting(nextGeneration())
    }

    private func nextGeneration() -> Int {
        state.withLock { state -> Int in
            state.generation += 1
            return state.generation
        }
    }

    /// Parks until raised (true), or until `generation` expires or the task is cancelled (false).
    private func waiting(_ generation: Int) async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let ready: Bool? = state.withLock { state in
                    if state.raised {
                        state.raised = false
                        return true
                    }
                    if state.generation != generation { return false }  // expired or cancelled already
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            self.expire(generation)
        }
    }

    private func expire(_ generation: Int) {
        let waiter: CheckedContinuation<Bool, Never>? = state.withLock { state in
            guard state.generation == generation else { return nil }
            state.generation += 1  // a later raise stays for the next wait
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: false)
    }
}
