import Foundation
import LedgerDomain
import LedgerPostgres
import Synchronization

/// A live feed client as the tail sees it: its audience, kept current by the events offered to
/// it in log order, and the messages queued for it, which its connection drains.
final class FeedSubscriber: Sendable {
    let id: Int
    /// Raised when messages are queued (or the queue overflowed).
    let signal = Signal()

    private struct State {
        var audience: FeedAudience
        /// The position the audience stands at: events up to it were offered (or read by the
        /// client itself while it caught up), and are not offered again.
        var position: Int64
        var queue = ""
        var overflowed = false
        /// Set by the tail's keep-alive tick: the connection owes an idle client a comment.
        var keepAliveDue = false
    }
    private let state: Mutex<State>

    init(id: Int, audience: FeedAudience, at position: Int64) {
        self.id = id
        self.state = Mutex(State(audience: audience, position: position))
    }

    /// The routing keys of what the audience may see: its account, its collaborations.
    var keys: Set<String> { state.withLock { Self.keys(of: $0.audience) } }

    static func keys(of audience: FeedAudience) -> Set<String> {
        var keys: Set<String> = [FeedItem.accountKey(audience.account)]
        for id in audience.owned { keys.insert(FeedItem.collaborationKey(id)) }
        for id in audience.held.keys { keys.insert(FeedItem.collaborationKey(id)) }
        return keys
    }

    /// Queues the item's message if the audience sees it. Returns whether it was queued, and the
    /// new routing keys when what the audience owns or holds changed.
    func offer(_ item: FeedItem, limit: Int) -> (queued: Bool, keys: Set<String>?) {
        state.withLock { state in
            guard !state.overflowed, item.position > state.position, let event = item.event, let collaborationId = item.collaborationId
            else { return (false, nil) }
            state.position = item.position
            let (owned, held) = (state.audience.owned.count, state.audience.held.count)
            guard state.audience.sees(event, in: collaborationId, at: item.recordedAtMicros) else { return (false, nil) }
            let keys = owned != state.audience.owned.count || held != state.audience.held.count ? Self.keys(of: state.audience) : nil
            if state.queue.utf8.count + item.message.utf8.count > limit {
                state.overflowed = true
                state.queue = ""
            } else {
                state.queue += item.message
            }
            return (true, keys)
        }
    }

    /// What is queued, whether the subscriber fell too far behind (then nothing more comes),
    /// and whether a keep-alive is due.
    func drain() -> (text: String, overflowed: Bool, keepAlive: Bool) {
        state.withLock { state in
            defer { (state.queue, state.keepAliveDue) = ("", false) }
            return (state.queue, state.overflowed, state.keepAliveDue)
        }
    }

    /// The tail's keep-alive tick: wakes the connection, which sends a comment if it is idle.
    func keepAliveDue() {
        state.withLock { $0.keepAliveDue = true }
        signal.raise()
    }
}
