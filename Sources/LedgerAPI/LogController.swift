import Foundation
import Hummingbird
import LedgerDomain
import LedgerLog
import LedgerReadModel
import LedgerStore
import LedgerWire
import Logging
import NIOCore
import PostgresNIO
import TransparencyLog

/// The verifiable log's endpoints (SPEC "Verifiable log"): the verifier key, signed
/// checkpoints, inclusion and consistency proofs, and evidence documents. They reveal
/// hashes to any authenticated caller, event content only to auditors and owners.
public struct LogController: Sendable {
    let tree: LogTree
    let store: EventStore
    let collaborations: CollaborationStreams
    let subjects: Subjects
    let latestCheckpoint: LatestCheckpoint
    let client: PostgresClient
    let logger: Logger
    /// Checks of an evidence request's query that the API does not know itself: what a front
    /// that places events in several logs reads there (its parameters, as one log takes them).
    var evidenceQuery: @Sendable (Request) throws -> Void = { _ in }
    /// How long evidence waits for a checkpoint that covers its event.
    var checkpointWait: Duration = .seconds(2)

    func addRoutes(to group: RouterGroup<LedgerRequestContext>) {
        group.get("log/key", use: key)
        group.get("log/checkpoint", use: checkpoint)
        group.get("log/status", use: status)
        group.get("log/proofs/inclusion", use: inclusion)
        group.get("log/proofs/consistency", use: consistency)
        group.get("audit/evidence/:position", use: evidence)
    }

    @Sendable func key(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        _ = try context.requireCaller()
        guard let key = try await tree.verifierKey() else {
            throw DomainError(.noCheckpoint, "no checkpoint has been signed yet")
        }
        return Self.text(key + "\n")
    }

    @Sendable func checkpoint(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        _ = try context.requireCaller()
        if let size = try Query.integer(request, "size", minimum: 0) {
            guard let stored = try await tree.checkpoint(size: size) else {
                throw DomainError(.notFound, "no checkpoint of size \(size) was signed")
            }
            return Self.text(stored.note)
        }
        return Self.text(try await latest(fresh: true).note)
    }

    /// The log's health: its head, the published checkpoint (who cosigned it), how far behind it
    /// and the views are, and the expiry service's state.
    @Sendable func status(_ request: Request, context: LedgerRequestContext) async throws -> LogStatus {
        _ = try context.requireCaller()
        let (head, signedAt, lagSeconds) = try await tree.status()
        let published = try await latestCheckpoint.get()
        var checkpoint: LogStatus.PublishedCheckpoint?
        if let published, let signedAt {
            let signatures = (try? SignedNote.parse(published.note).signatures) ?? []
            // The log signs with the checkpoint's origin as its key's name; the others are witnesses.
            let origin = try? Checkpoint(text: SignedNote.parse(published.note).text).origin
            checkpoint = .init(
                size: published.size, rootHash: Base64.encode(published.rootHash), signedAt: signedAt, publishedAt: published.publishedAt,
                cosigners: signatures.map(\.name).filter { $0 != origin })
        }
        let health = StatusReads(client: client, logger: logger)
        let projections = try await health.projections()
        let expiry = try await health.expiry()
        let integrity = try await tree.integrity()
        // Not clamped: a log cut below its published checkpoint shows a negative lag, never 0.
        return LogStatus(
            head: head, checkpoint: checkpoint, checkpointLagEvents: head - (published?.size ?? 0),
            checkpointLagSeconds: lagSeconds, projections: projections,
            expiry: expiry, tree: integrity)
    }

    @Sendable func inclusion(_ request: Request, context: LedgerRequestContext) async throws -> InclusionProof {
        _ = try context.requireCaller()
        guard let position = try Query.integer(request, "position", minimum: 1) else {
            throw Self.invalid("position is required: the log position (1 or more) of the event")
        }
        let requested = try Query.integer(request, "treeSize", minimum: 1)
        let latest = try await latest(atLeast: requested ?? 0)
        let size = requested ?? latest.size
        guard size <= latest.size else {
            throw Self.invalid("treeSize \(size) is past the latest checkpoint (size \(latest.size))")
        }
        guard position <= size else { throw Self.invalid("position \(position) is not in the tree of size \(size)") }
        return try await proof(position: position, size: size)
    }

    @Sendable func consistency(_ request: Request, context: LedgerRequestContext) async throws -> ConsistencyProof {
        _ = try context.requireCaller()
        guard let from = try Query.integer(request, "from", minimum: 0), let to = try Query.integer(request, "to", minimum: 0) else {
            throw Self.invalid("from and to are required: the two tree sizes")
        }
        guard from <= to else { throw Self.invalid("from (\(from)) is larger than to (\(to))") }
        let latest = try await latest(atLeast: to)
        guard to <= latest.size else { throw Self.invalid("to (\(to)) is past the latest checkpoint (size \(latest.size))") }
        let hashes = try await tree.consistencyProof(from: from, to: to)
        return ConsistencyProof(from: from, to: to, hashes: hashes.map(Base64.encode))
    }

    /// The formats of `GET /v1/audit/evidence/{position}`.
    enum EvidenceFormat: String {
        case json
        case tlogProof = "tlog-proof"
    }

    /// `GET /v1/audit/evidence/{position}[?size=N]`: the JSON evidence document (no `format`, or
    /// `format=json`), or the same evidence as a C2SP tlog-proof text (`format=tlog-proof`):
    /// index position − 1, the inclusion proof, the published checkpoint with its cosignatures,
    /// and `extra` the event's leaf bytes, so the proof holds its entry. A tlog-proof never
    /// carries the openings of personal values (they are in the JSON evidence of the same
    /// position); its entry is the event as recorded, so one older than pseudonyms and
    /// commitments holds its values in plain text, as its JSON evidence does.
    @Sendable func evidence(_ request: Request, context: LedgerRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let raw = try context.parameters.require("position")
        guard let position = Int64(raw), position >= 1 else { throw Self.invalid("position must be an integer of 1 or more") }
        let formatName = try Query.text(request, "format") ?? EvidenceFormat.json.rawValue
        guard let format = EvidenceFormat(rawValue: formatName) else { throw Self.invalid("format must be json or tlog-proof") }
        try evidenceQuery(request)
        guard let event = try await store.readAll(after: position - 1, limit: 1).first, event.position == position else {
            throw DomainError.notFound("event at position \(position)")
        }
        if !caller.isAuditor {
            // The owner, or the account a grant names (a device checking its own grant); the
            // events name them by pseudonym (or, before pseudonyms, by account).
            let names = [caller.account, try await subjects.existing(caller.account)].compactMap { $0 }
            var granted: String?
            if event.type == "AccessGranted",
                case .string(let account)? = (try? CanonicalJSON.decode(JSONValue.self, from: event.data))?["account"]
            {
                granted = account
            }
            guard try await owner(of: event).map(names.contains) == true || granted.map(names.contains) == true else {
                throw DomainError(.notOwnerOrAuditor, "evidence is for auditors, the collaboration's owner and the account a grant names")
            }
        }
        // `size`: the evidence under that signed checkpoint (one another log recorded, or one an
        // auditor keeps); else the latest, once it covers the event.
        let checkpoint: LogTree.StoredCheckpoint
        if let size = try Query.integer(request, "size", minimum: 1) {
            // A tree that does not hold the event has no evidence of it, as a size never signed.
            guard size >= position else { throw DomainError(.notFound, "a tree of size \(size) does not hold position \(position)") }
            guard let stored = try await tree.checkpoint(size: size) else {
                throw DomainError(.notFound, "no checkpoint of size \(size) was signed")
            }
            checkpoint = stored
        } else {
            checkpoint = try await covering(position)
        }
        let leaf = EventLeaf.bytes(event)
        let (leafHash, hashes) = try await tree.inclusionProof(position: position, size: checkpoint.size)
        if format == .tlogProof {
            return Self.text(TlogProof(extra: leaf, index: position - 1, proof: hashes, checkpoint: checkpoint.note).text)
        }
        let references = Disclosure.references([event])
        let evidence = Evidence(
            event: Evidence.Event(event),
            leaf: Base64.encode(leaf),
            inclusion: InclusionProof(position: position, size: checkpoint.size, leafHash: leafHash, hashes: hashes),
            checkpoint: checkpoint.note,
            // The openings of the event's commitments still kept: each plaintext checks against its commitment.
            openings: try await subjects.openings(Array(references.commitments).sorted()),
            accounts: try await subjects.disclosure(pseudonyms: references.pseudonyms, commitments: []).accounts)
        return try evidence.response(from: request, context: context)
    }

    /// The owner of the collaboration whose stream holds `event`, from the stream's inline
    /// state (the log's own, never behind it as the views may be: an owner asking right after a
    /// write is not refused); nil for another stream. Other errors (the database unavailable)
    /// propagate: they are no refusal.
    private func owner(of event: RecordedEvent) async throws -> String? {
        guard let collaborationId = Streams.collaborationId(of: event.streamId) else { return nil }
        do {
            return try await collaborations.current(collaborationId).state.owner
        } catch let error as DomainError where error.code == .notFound {
            return nil
        }
    }

    private func proof(position: Int64, size: Int64) async throws -> InclusionProof {
        let (leafHash, hashes) = try await tree.inclusionProof(position: position, size: size)
        return InclusionProof(position: position, size: size, leafHash: leafHash, hashes: hashes)
    }

    /// The latest checkpoint (at least `size` large if one is); `fresh` reads it again.
    private func latest(atLeast size: Int64 = 0, fresh: Bool = false) async throws -> LogTree.StoredCheckpoint {
        let latest = fresh ? try await tree.latestCheckpoint() : try await latestCheckpoint.get(atLeast: size)
        guard let latest else {
            throw DomainError(.noCheckpoint, "no checkpoint has been signed yet")
        }
        return latest
    }

    /// The latest checkpoint once it covers `position`: one is signed within about a second
    /// of an append, so this waits (bounded) rather than refusing a fresh event.
    private func covering(_ position: Int64) async throws -> LogTree.StoredCheckpoint {
        let deadline = ContinuousClock.now + checkpointWait
        while true {
            if let latest = try await latestCheckpoint.get(atLeast: position), latest.size >= position { return latest }
            guard ContinuousClock.now < deadline else {
                throw DomainError(.notCheckpointed, "no checkpoint covers position \(position) yet; retry in a second")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    static func invalid(_ message: String) -> DomainError { DomainError.invalid(message, code: .invalidQuery) }

    public static func text(_ body: String) -> Response {
        Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}

extension InclusionProof: ResponseEncodable {}
extension ConsistencyProof: ResponseEncodable {}
extension Evidence: ResponseEncodable {}
