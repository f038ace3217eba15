import Foundation
import LedgerWire

/// The verifiable log: what an auditor's tooling fetches. Check what comes back with the
/// verifier key you saved, never with the one the server hands out today.
extension LedgerClient {
    /// The log's health (any signed-in account): its head, the published checkpoint, how far
    /// the views are behind, and the expiry service's state and next `dueAt`.
    public func logStatus() async throws -> LogStatus {
        try await send("GET", "/v1/log/status")
    }

    /// The checkpoints' verifier key (`name+id+key`).
    public func logKey() async throws -> String {
        try await text("/v1/log/key").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The latest signed checkpoint (a C2SP signed note), or the kept one of `size`.
    public func checkpoint(size: Int64? = nil) async throws -> String {
        try await text("/v1/log/checkpoint", query: ["size": size.map(String.init)])
    }

    /// The inclusion proof of the event at `position` in the tree of `treeSize` leaves (the
    /// latest checkpoint's size if nil).
    public func inclusionProof(position: Int64, treeSize: Int64? = nil) async throws -> InclusionProof {
        try await send(
            "GET", "/v1/log/proofs/inclusion", query: ["position": String(position), "treeSize": treeSize.map(String.init)])
    }

    public func consistencyProof(from: Int64, to: Int64) async throws -> ConsistencyProof {
        try await send("GET", "/v1/log/proofs/consistency", query: ["from": String(from), "to": String(to)])
    }

    /// The evidence document of the event at `position` (auditors, and the owner of its collaboration).
    public func evidence(position: Int64) async throws -> Evidence {
        try await send("GET", "/v1/audit/evidence/\(position)")
    }

    /// Every event that names collaboration `id`, and no other, proven through the verifiable
    /// index (auditors, and its owner); `LookupVerifier.verify(_:key:asked:)` checks it offline.
    public func lookup(collaboration id: String) async throws -> IndexLookup {
        try await pagedLookup(["collaboration": id])
    }

    /// The same, bounded at `time` (its microsecond, as the log records times): the answer also
    /// carries the log's first leaf recorded after it (`firstAfter`), once the log has one, so
    /// `verifiedMembers(collaboration:key:at:)` folds exactly the events recorded by then.
    public func lookup(collaboration id: String, at time: Date) async throws -> IndexLookup {
        guard let text = RFC3339.text(time) else {
            throw LedgerError(status: 0, code: "invalid_time", message: "\(time) is outside the years 1 to 9999")
        }
        return try await pagedLookup(["collaboration": id, "at": text])
    }

    /// Every event that names the identity `rootHash` (32 bytes) in any collaboration, and no
    /// other, proven (auditors).
    public func lookup(identity rootHash: [UInt8]) async throws -> IndexLookup {
        try await pagedLookup(["identity": Data(rootHash).base64EncodedString()])
    }

    /// A lookup's pages merged into one answer: the first as asked, each next one under its
    /// checkpoint (`size`) after the previous page (`next`), each of the same revision and
    /// proof. A key named by at most 10,000 events is one page.
    func pagedLookup(_ query: [String: String?]) async throws -> IndexLookup {
        var merged: IndexLookup = try await send("GET", "/v1/audit/lookup", query: query)
        while let next = merged.next {
            var asked = query
            (asked["size"], asked["after"]) = (String(merged.record.inclusion.treeSize), String(next))
            let page: IndexLookup = try await send("GET", "/v1/audit/lookup", query: asked)
            guard page.record == merged.record, page.proof == merged.proof, page.checkpoint == merged.checkpoint,
                let first = page.positions.first, first > next
            else {
                throw LedgerError(
                    status: 200, code: "bad_response",
                    message: "a page of the lookup is not under the first page's revision, or lists nothing after the last")
            }
            merged.events += page.events
            merged.positions += page.positions
            merged.next = page.next
        }
        return merged
    }

    /// On shards: every shard's lookup of the identity `rootHash`, under one partition map
    /// (auditors); `LookupVerifier.verify(_:key:asked:at:)` checks that they are every shard's.
    public func shardedLookup(identity rootHash: [UInt8]) async throws -> ShardedIndexLookup {
        try await send("GET", "/v1/audit/lookup", query: ["identity": Data(rootHash).base64EncodedString()])
    }

    /// On shards: the evidence of the event at `position` of shard `shard` through both levels
    /// (`Evidence.top`: its shard's checkpoint in the top log); `EvidenceVerifier.verify(_:key:)`
    /// checks both with the deployment's key.
    public func evidence(position: Int64, shard: Int) async throws -> Evidence {
        try await send("GET", "/v1/audit/evidence/\(position)", query: ["shard": String(shard)])
    }

    /// The same evidence as a C2SP tlog-proof (`c2sp.org/tlog-proof@v1` text, what `.tlog-proof`
    /// files hold): the event's leaf bytes as `extra`, its index, inclusion proof and the
    /// published checkpoint with its cosignatures. Check it with `TlogProof(text:)` and
    /// `EvidenceVerifier.verify(_:key:policy:openings:)`, or any tlog-proof verifier; the
    /// openings of its personal values are in `evidence(position:)`, never in the proof.
    public func tlogProof(position: Int64) async throws -> String {
        try await text("/v1/audit/evidence/\(position)", query: ["format": "tlog-proof"])
    }

    /// On shards: one level of the evidence of the event at `position` of shard `shard` as a C2SP
    /// tlog-proof: `top` false, the event under its shard's checkpoint the top log recorded; true,
    /// that checkpoint's entry under the top log's checkpoint. Check the two together with
    /// `EvidenceVerifier.verify(_:top:key:policy:openings:)`, or each with any tlog-proof verifier.
    public func tlogProof(position: Int64, shard: Int, top: Bool) async throws -> String {
        try await text(
            "/v1/audit/evidence/\(position)", query: ["format": "tlog-proof", "shard": String(shard), "level": top ? "top" : "shard"])
    }

    private func text(_ path: String, query: [String: String?] = [:]) async throws -> String {
        String(decoding: try await exchange("GET", path, query: query).body, as: UTF8.self)
    }
}
