import LedgerDomain
import LedgerWire
import TransparencyLog

/// A collaboration's members at a position, from a lookup answer alone (docs/TRUST.md, "The
/// verifiable index", "Members, verified"): the answer checked link by link (`LookupVerifier`,
/// complete through the position), then the listed events up to it read back from their leaves
/// and folded with the domain's own rules (`CollaborationState`), nothing taken from the
/// server's views. Identities are named by root hash, accounts by pseudonym, as the log holds them.
public enum VerifiedMembers {
    public struct Refused: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// The members of collaboration `id` at `position` (nil: the answer's revision), with the
    /// verification's report; `state` is nil when no listed event up to it starts the collaboration.
    public static func fold(
        _ lookup: IndexLookup, key: NoteVerifier, collaboration id: String, at position: Int64? = nil
    ) throws -> (report: LookupVerifier.Report, state: CollaborationState?) {
        let report = try LookupVerifier.verify(lookup, key: key, asked: .collaboration(id), through: position)
        return (report, try fold(lookup, through: position ?? report.revisionSize))
    }

    /// The members of collaboration `id` as the events recorded at or before `micros` (since the
    /// epoch) left them: the answer must bound that time (`firstAfter`, `LookupVerifier`'s link 7),
    /// at or past `timesRiseFrom` (1 for a log begun with times that rise; `ledger index verify`
    /// names it for an older one).
    /// `report.recordedThrough` is the last position folded. The states are the events'; as the
    /// views' members at a time do, `status(_:at:)` reads each as of that moment.
    public static func fold(
        _ lookup: IndexLookup, key: NoteVerifier, collaboration id: String, recordedBy micros: Int64, timesRiseFrom: Int64 = 1
    ) throws -> (report: LookupVerifier.Report, state: CollaborationState?) {
        let report = try LookupVerifier.verify(lookup, key: key, asked: .collaboration(id), at: micros, timesRiseFrom: timesRiseFrom)
        return (report, try fold(lookup, through: report.recordedThrough ?? 0))
    }

    /// An identity's state as of `micros`, as `ledger_member_state` reads the views' (SPEC "A
    /// window holds at both ends"): invited or granted with its window ended by then, `expired`
    /// (its `AccessExpired` is appended at or after the end); granted with its window not yet
    /// begun, `scheduled`; otherwise what the events say.
    public static func status(_ identity: CollaborationState.Identity, at micros: Int64) -> String {
        if identity.isCurrent, let end = identity.window.notAfterMicros, end <= micros { return "expired" }
        if identity.status == .granted, let start = identity.window.notBeforeMicros, start > micros { return "scheduled" }
        return identity.status.rawValue
    }

    /// The listed events up to `through` (verified), read back from their leaves and folded.
    private static func fold(_ lookup: IndexLookup, through: Int64) throws -> CollaborationState? {
        var state: CollaborationState?
        for entry in lookup.events where entry.inclusion.position <= through {
            // Verified above: the leaf is included, and it names the collaboration.
            guard let bytes = Base64.decode(entry.leaf), let recorded = EventLeaf.event(from: bytes) else {
                throw Refused(description: "the leaf at \(entry.inclusion.position) is not an event's")
            }
            let event: CollaborationEvent
            do {
                event = try CollaborationEvent(recorded)
            } catch {
                throw Refused(
                    description: "the event at \(entry.inclusion.position) is not a collaboration's event the domain reads: \(error)")
            }
            if case .started(let started) = event {
                guard state == nil else { throw Refused(description: "a second start at \(entry.inclusion.position)") }
                state = CollaborationState(started: started)
            } else {
                guard state != nil else { throw Refused(description: "an event at \(entry.inclusion.position) before the start") }
                state?.apply(event)
            }
        }
        return state
    }
}
