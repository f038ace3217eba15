import Synchronization

/// Group commit, for any work that is cheaper done for many callers at once: callers queue
/// their items, and one of them (the leader) processes the queued items as a group while the
/// others wait; when it is done, the first item still queued leads the next group. At most
/// `maxInFlight` groups are processed at once; a group holds at most `maxWeight` (at least one
/// item, whatever its weight).
///
/// Callers woken by a group's outputs often queue again at once (a writer appending in a
/// loop). The first of them to queue finds the slot free and would lead a group of one, leaving
/// the others to the group after: groups would alternate between one item and the rest. So a
/// leader that finds fewer items queued than recent groups took yields to the executor while
/// the queue keeps growing (the woken callers were scheduled before it): groups stay as large
/// as the callers' concurrency. A lone caller does not yield (recent groups held one item too);
/// callers that queue only later (over a network) cost a group two yields.
///
/// Used by the event store (appends, weighed by their events), the commands' reads
/// (`CommandReads`) and the proof batcher.
package final class GroupQueue<Item: Sendable, Output: Sendable>: Sendable {
    private struct Entry: Sendable {
        let item: Item
        let ticket: Ticket<Turn>
    }

    private enum Turn: Sendable {
        /// Process the next group, starting with this item (it was taken off the queue for it).
        case lead
        case done(Output)
    }

    private struct State {
        var waiting: [Entry] = []
        var leaders = 0
        /// About as many items as recent groups took: the largest group's size, less one for
        /// each group since. A group cut short (a caller descheduled) does not set it back, and
        /// when callers leave it falls to what they queue.
        var recentGroup = 0
    }

    private let state = Mutex<State>(State())
    let maxInFlight: Int
    let maxWeight: Int
    let weight: @Sendable (Item) -> Int

    package init(maxInFlight: Int = 1, maxWeight: Int, weight: @escaping @Sendable (Item) -> Int = { _ in 1 }) {
        self.maxInFlight = maxInFlight
        self.maxWeight = maxWeight
        self.weight = weight
    }

    /// Queues `items` together and returns their outputs, in order. Meanwhile the caller may
    /// be asked to lead: to run `process` (which returns one output per item, in order) on a
    /// group of queued items, its own and others'. Every caller passes the same `process`.
    package func submit(_ items: [Item], process: @Sendable ([Item]) async -> [Output]) async -> [Output] {
        let entries = items.map { Entry(item: $0, ticket: Ticket()) }
        let leads = state.withLock { state in
            state.waiting += entries
            guard state.leaders < maxInFlight else { return false }
            state.leaders += 1
            return true
        }
        if leads { await lead(first: nil, process: process) }
        var outputs: [Output] = []
        for entry in entries {
            var turn = await entry.ticket.wait()
            if case .lead = turn {
                await lead(first: entry, process: process)
                turn = await entry.ticket.wait()
            }
            guard case .done(let output) = turn else { preconditionFailure("an item is told to lead at most once") }
            outputs.append(output)
        }
        return outputs
    }

    /// Before a group is taken: yields while fewer items are queued than recent groups took
    /// and the queue is below `maxWeight`, until two yields in a row let no item in.
    private func gather(first: Entry?) async {
        var (seen, idle) = (-1, 0)
        while true {
            let queued = state.withLock { state -> Int? in
                let count = state.waiting.count + (first == nil ? 0 : 1)
                let weight = state.waiting.reduce(first.map { self.weight($0.item) } ?? 0) { $0 + self.weight($1.item) }
                return count < state.recentGroup && weight < maxWeight ? count : nil
            }
            guard let queued else { return }
            idle = queued == seen ? idle + 1 : 0
            if idle == 2 { return }
            seen = queued
            await Task.yield()
        }
    }

    private func lead(first: Entry?, process: @Sendable ([Item]) async -> [Output]) async {
        await gather(first: first)
        let group: [Entry] = state.withLock { state in
            var taken = first.map { [$0] } ?? []
            var total = taken.reduce(0) { $0 + weight($1.item) }
            while let next = state.waiting.first, taken.isEmpty || total + weight(next.item) <= maxWeight {
                taken.append(next)
                total += weight(next.item)
                state.waiting.removeFirst()
            }
            state.recentGroup = max(taken.count, state.recentGroup - 1)
            return taken
        }
        if !group.isEmpty {
            let outputs = await process(group.map(\.item))
            precondition(outputs.count == group.count, "a group's process returns one output per item")
            for (entry, output) in zip(group, outputs) { entry.ticket.resolve(.done(output)) }
        }
        // Hand over to the first item still queued, taking it off the queue so that no other
        // group takes it too; or give the slot back.
        let next: Entry? = state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.leaders -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.ticket.resolve(.lead)
    }
}
