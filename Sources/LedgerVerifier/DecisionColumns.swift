import Foundation
import LedgerDomain
import NIOCore

/// `ledger_decide_proofs_committed`'s arguments: one column per request field (each request
/// with its verdict, and where that verdict is among the appends' events), then the appends
/// as `ledger_append` takes them.
struct DecisionColumns {
    var requestIds: [UUID] = [], collaborations: [String] = [], accounts: [String] = [], challengeIds: [UUID] = []
    var consumes: [Bool] = [], signatures: [ByteBuffer] = [], publicKeys: [ByteBuffer] = [], indexes: [Int64] = []
    var hashes: [String] = [], statuses: [String] = [], reasons: [String] = [], rootHashes: [ByteBuffer] = []
    var appends: [Int32] = [], offsets: [Int32] = []
    var streams: [String] = [], expected: [Int64] = [], states: [String] = [], counts: [Int32] = []
    var eventIds: [UUID] = [], types: [String] = [], data: [String] = [], metadata: [String] = []

    /// One collaboration's verdicts; `number` counts the appends from 1.
    mutating func add(_ append: ProofBatcher.Append, number: Int) {
        streams.append(Streams.collaboration(append.collaborationId))
        expected.append(append.version)
        states.append(append.state.json)
        counts.append(Int32(append.verdicts.count))
        for (offset, verdict) in append.verdicts.enumerated() {
            let submission = verdict.checked.submission
            let columns = Verdict.columns(of: verdict.event)
            requestIds.append(submission.requestId)
            collaborations.append(submission.collaborationId)
            accounts.append(submission.account)
            challengeIds.append(submission.challengeId)
            consumes.append(verdict.checked.consumesChallenge)
            signatures.append(ByteBuffer(bytes: submission.signature))
            publicKeys.append(ByteBuffer(bytes: submission.proof.publicKey))
            indexes.append(Int64(submission.proof.publicKeyIndex))
            hashes.append(ProofRequests.hashesJSON(submission.proof))
            statuses.append(columns.status)
            reasons.append(columns.reason ?? "")
            rootHashes.append(ByteBuffer(bytes: columns.rootHash?.bytes ?? []))
            appends.append(Int32(number))
            offsets.append(Int32(offset))
            let event = ProofVerdict.newEvent(verdict.event, for: submission)
            eventIds.append(event.eventId)
            types.append(event.type)
            data.append(event.data)
            metadata.append(event.metadata)
        }
    }
}
