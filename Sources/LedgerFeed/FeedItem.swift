import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerWire
import ServiceLifecycle
import Synchronization

/// An event of the log as the feed sends it: decoded once (by the tail, for every client),
/// with its SSE message ready.
struct FeedItem: Sendable {
    var position: Int64
    /// Nil for an event of another stream than a collaboration's, one that does not decode, or one
    /// of a collaboration this shard does not hold (`FeedTail.holds`): no client is sent those.
    var collaborationId: String?
    var event: CollaborationEvent?
    /// When it was recorded: a notice after the end of the account's window is not its to see.
    var recordedAtMicros: Int64 = 0
    /// `id:`, `event:` and `data:` (the event as the history endpoint shows it, on one line).
    var message: String

    static let encoder = APIJSON.encoder()

    static func collaborationKey(_ id: String) -> String { "c:" + id }
    static func accountKey(_ account: String) -> String { "a:" + account }

    /// Who the tail offers this item to: the subscribers of its collaboration, and those of the
    /// account it starts a collaboration for, grants access to or revokes.
    var keys: [String] {
        guard let collaborationId else { return [] }
        switch event {
        case .started(let started): return [Self.collaborationKey(collaborationId), Self.accountKey(started.owner)]
        case .accessGranted(let granted): return [Self.collaborationKey(collaborationId), Self.accountKey(granted.account)]
        case .accessRevoked(let revoked): return [Self.collaborationKey(collaborationId), Self.accountKey(revoked.account)]
        case .accessExpired(let expired):
            return [Self.collaborationKey(collaborationId)] + (expired.account.map { [Self.accountKey($0)] } ?? [])
        default: return [Self.collaborationKey(collaborationId)]
        }
    }

    /// `disclosure`: what the message may show of the event's personal values; `holds`: the
    /// collaborations whose events are this log's to send.
    init(_ recorded: RecordedEvent, disclosure: Disclosure, holds: (String) -> Bool) {
        position = recorded.position
        recordedAtMicros = recorded.recordedAtMicros
        message = ""
        guard let collaboration = Streams.collaborationId(of: recorded.streamId), holds(collaboration),
            let event = try? CollaborationEvent(recorded)
        else {
            return
        }
        collaborationId = collaboration
        self.event = event
        // An event that decodes has JSON data, so its entry does too.
        let json =
            (try? Self.encoder.encode(History.Entry(recorded, disclosure: disclosure))).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        message = "id: \(recorded.position)\nevent: \(recorded.type)\ndata: \(json)\n\n"
    }
}
