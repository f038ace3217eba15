import Foundation
import Hummingbird
import LedgerDomain
import LedgerIndex
import LedgerIndexStore
import LedgerLog
import LedgerStore
import LedgerWire
import TransparencyLog

/// `GET /v1/audit/lookup?collaboration=ID` or `?identity=ROOTHASH` (docs/TRUST.md, "The
/// verifiable index", "Lookups"): every event naming the key among the positions the newest
/// recorded revision under the published checkpoint covers, and no other, with the chain that
/// proves it (`IndexLookup`; `LookupVerifier` checks it offline). With `size=N`, under the signed
/// checkpoint of size N instead (the shard front asks for the one the top log recorded). With
/// `after=P`, the key's positions after P only, at most `maxListed` (a page; `next` names the
/// `after` of the next one; `LedgerClient.lookup` merges the pages into one answer). With
/// `at=T` (RFC 3339), the answer also carries the log's first leaf recorded after T under that
/// checkpoint (`firstAfter`), so a verifier folds exactly the events recorded at or before T.
///
/// A collaboration's lookup is for an auditor or its owner; an identity's, for an auditor (it
/// spans collaborations). An auditor asking for a key no event names gets a proof of absence, as
/// any other answer; an owner asking for a collaboration that is not theirs, or that does not
/// exist, is refused alike, so the refusal says nothing of others' collaborations.
struct LookupController: Sendable {
    let index: IndexReader
    let tree: LogTree
    let store: EventStore
    let collaborations: CollaborationStreams
    let subjects: Subjects
    let latestCheckpoint: LatestCheckpoint

    func addRoutes(to group: RouterGroup<LedgerRequestContext>) {
        group.get("audit/lookup", use: lookup)
    }

    @Sendable func lookup(_ request: Request, context: LedgerRequestContext) async throws -> IndexLookup {
        let caller = try context.requireCaller()
        let (collaboration, identity) = (try Query.text(request, "collaboration"), try Query.text(request, "identity"))
        let key: IndexKey
        switch (collaboration, identity) {
        case (let id?, nil):
            guard !id.isEmpty else { throw Self.invalid("collaboration must not be empty") }
            key = .collaboration(id)
            if !caller.isAuditor { try await requireOwner(caller, of: id) }
        case (nil, let text?):
            guard let identity = IndexKey.identity(base64: text) else {
                throw Self.invalid("identity must be a root hash: the standard padded base64 of 32 bytes")
            }
            guard caller.isAuditor else { throw DomainError(.notAuditor, "an identity's lookup spans collaborations: it is for auditors") }
            key = identity
        default:
            throw Self.invalid("give collaboration=ID or identity=ROOTHASH, one of the two")
        }
        // `size`: under that signed checkpoint (on shards, the one the top log recorded); else the latest.
        let checkpoint: LogTree.StoredCheckpoint
        let size = try Query.integer(request, "size", minimum: 1)
        let at = try Query.micros(request, "at")
        let after = try Query.integer(request, "after", minimum: 0) ?? 0
        if let size {
            guard let stored = try await tree.checkpoint(size: size) else {
                throw DomainError(.notFound, "no checkpoint of size \(size) was signed")
            }
            checkpoint = stored
        } else {
            guard let latest = try await latestCheckpoint.get() else {
                throw DomainError(.noCheckpoint, "no checkpoint has been signed yet")
            }
            checkpoint = latest
        }
        guard let (recordPosition, revision) = try await index.recorded(through: checkpoint.size) else {
            if size != nil {
                throw DomainError(
                    .notFound,
                    "no index revision is recorded under the checkpoint of size \(checkpoint.size): ask for a larger one, or without size")
            }
            throw DomainError(
                .notCheckpointed,
                "no index revision is recorded under the published checkpoint yet: the index records one within about a second of an append (LEDGER_INDEX=yes); retry shortly",
                retryAfter: 1)
        }
        let (proof, listed) = try await index.lookup(key, revision: revision)
        // A page: the positions after `after`, at most `maxListed`; `next` asks for the rest.
        let rest = listed.drop { $0 <= after }
        let positions = Array(rest.prefix(Self.maxListed))
        let next = rest.count > positions.count ? positions.last : nil
        // `at`: the first position recorded after it, if the checkpoint holds one.
        var firstAfter: Int64?
        if let at {
            firstAfter = try await store.firstPosition(recordedAfter: at, through: checkpoint.size)
        }
        // Read in position order; the record and the first leaf after T are picked out by position.
        let wanted = Set(positions + [recordPosition] + (firstAfter.map { [$0] } ?? [])).sorted()
        let events = try await store.read(positions: wanted)
        guard events.map(\.position) == wanted else {
            throw DomainError(.internalError, "the log does not hold every position the index lists")
        }
        let proofs = try await tree.inclusionProofs(positions: events.map(\.position), size: checkpoint.size)
        let entries = Dictionary(
            uniqueKeysWithValues: zip(events, proofs).map { event, proof in
                (event.position, IndexLookup.Entry(event, size: checkpoint.size, leafHash: proof.leafHash, hashes: proof.hashes))
            })
        return IndexLookup(
            collaboration: collaboration, identity: identity, positions: positions,
            revision: .init(logSize: revision.logSize, root: revision.root.base64), checkpoint: checkpoint.note,
            record: entries[recordPosition]!, proof: Base64.encode(proof.bytes), events: positions.map { entries[$0]! },
            firstAfter: firstAfter.map { entries[$0]! }, next: next)
    }

    /// Refused unless `caller` owns collaboration `id` (named by pseudonym, or by account before
    /// pseudonyms); a collaboration that does not exist is refused the same way.
    private func requireOwner(_ caller: Caller, of id: String) async throws {
        let names = [caller.account, try await subjects.existing(caller.account)].compactMap { $0 }
        let owner: String?
        do {
            owner = try await collaborations.current(id).state.owner
        } catch let error as DomainError where error.code == .notFound {
            owner = nil
        }
        guard let owner, names.contains(owner) else {
            throw DomainError(.notOwnerOrAuditor, "a collaboration's lookup is for auditors and its owner")
        }
    }

    /// The most events one answer lists (each with its leaf and inclusion proof, about 1 KB):
    /// a bound on what one request makes the server read and send. A key named by more is
    /// answered in pages (`after`, `next`), under one checkpoint (`size`).
    static let maxListed = 10_000

    static func invalid(_ message: String) -> DomainError { DomainError.invalid(message, code: .invalidQuery) }
}

extension IndexLookup: ResponseEncodable {}
