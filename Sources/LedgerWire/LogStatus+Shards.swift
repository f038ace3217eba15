import Foundation

extension LogStatus {
    /// `GET /v1/log/status` on shards (docs/SCALING.md). The log auditors know is the top log, so
    /// the head, the published checkpoint, its lag and the tree are `top`'s. The views and the
    /// expiry service run on each shard: the projections are every shard's, each named by its
    /// shard; the expiry service is running when it runs on every shard, its next window due is
    /// the earliest of any shard's and its overdue windows are all of theirs. `shards` holds each
    /// shard's own status, by index.
    public static func sharded(top: LogStatus, _ parts: [LogStatus]) -> LogStatus {
        let parts = parts.enumerated().map { index, part in
            var part = part
            part.shard = index
            part.projections = part.projections.map { projection in
                var projection = projection
                projection.shard = index
                return projection
            }
            return part
        }
        var whole = top
        whole.projections = parts.flatMap(\.projections)
        whole.expiry = Expiry(
            running: !parts.isEmpty && parts.allSatisfy(\.expiry.running), nextDueAt: parts.compactMap(\.expiry.nextDueAt).min(),
            overdue: parts.reduce(0) { $0 + $1.expiry.overdue })
        whole.shard = nil
        whole.shards = parts
        return whole
    }
}
