import Foundation

/// Bounds how many rejected proofs one account can have recorded per minute, so a flood
/// cannot grow the log without bound.
public actor RejectionThrottle {
    let limit: Int
    let window: TimeInterval
    private var recent: [String: [Date]] = [:]

    public init(limit: Int = 20, window: TimeInterval = 60) {
        self.limit = limit
        self.window = window
    }

    func allows(_ account: String) -> Bool {
        let cutoff = Date().addingTimeInterval(-window)
        recent[account] = recent[account]?.filter { $0 > cutoff }
        return (recent[account]?.count ?? 0) < limit
    }

    func recordRejection(_ account: String) {
        recent[account] = (recent[account] ?? []) + [Date()]
    }
}
