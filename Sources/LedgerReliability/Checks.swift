import Foundation
import LedgerClient
import LedgerProjections
import LedgerStore
import Logging
import PostgresNIO

/// After the load and the faults: what the ledger holds against what it acknowledged.
struct Checks {
    let client: PostgresClient
    let store: EventStore
    let logger: Logger

    struct Result {
        var lost: [String] = []
        var undecided = 0
        var verdictsNotOne = 0
        var pendingStillPending = 0
        var diverged = 0
        var divergence: [String] = []
        var proofRequests = 0
        var events: Int64 = 0
    }

    /// Waits until no proof request is pending and every projection has reached the head.
    func drain(deadline: ContinuousClock.Instant) async -> Bool {
        while ContinuousClock.now < deadline {
            if let settled = try? await settled(), settled { return true }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return false
    }

    func settled() async throws -> Bool {
        let rows = try await client.query(
            """
            SELECT (SELECT count(*) FROM ledger_proof_requests WHERE status = 'pending'),
                   (SELECT count(*) FROM ledger_projections p, ledger_head h WHERE p.position < h.position)
            """, logger: logger)
        for try await (pending, behind) in rows.decode((Int64, Int64).self) { return pending == 0 && behind == 0 }
        return false
    }

    /// Every acknowledged position holds an event of that collaboration (a grant: its AccessGranted).
    func acknowledged(_ acks: [Tally.Ack]) async throws -> [String] {
        var stored: [Int64: (stream: String, type: String)] = [:]
        for chunk in stride(from: 0, to: acks.count, by: 5000) {
            let positions = acks[chunk..<min(chunk + 5000, acks.count)].map(\.position)
            let rows = try await client.query(
                "SELECT position, stream_id, event_type FROM ledger_events WHERE position = ANY(\(positions))", logger: logger)
            for try await (position, stream, type) in rows.decode((Int64, String, String).self) { stored[position] = (stream, type) }
        }
        return acks.compactMap { ack in
            guard let event = stored[ack.position] else {
                return "\(ack.kind.rawValue) of \(ack.collaborationId) at \(ack.position): no event"
            }
            if event.stream != "collaboration-\(ack.collaborationId)" {
                return "\(ack.kind.rawValue) of \(ack.collaborationId) at \(ack.position): the event there is of \(event.stream)"
            }
            if ack.kind == .grant && event.type != "AccessGranted" {
                return "grant in \(ack.collaborationId) at \(ack.position): the event there is \(event.type)"
            }
            return nil
        }
    }

    func run(acks: [Tally.Ack], pending: [Tally.Pending], api: (String) -> LedgerClient) async throws -> Result {
        var result = Result()
        result.lost = try await acknowledged(acks)
        let rows = try await client.query(
            """
            SELECT (SELECT count(*) FROM ledger_proof_requests),
                   (SELECT count(*) FROM ledger_proof_requests WHERE status = 'pending'),
                   (SELECT count(*) FROM (
                      SELECT r.request_id FROM ledger_proof_requests r
                      LEFT JOIN ledger_events e ON e.event_type IN ('AccessGranted', 'ProofRejected')
                           AND e.data->>'proofRequestId' = r.request_id::text
                      GROUP BY r.request_id, r.status
                      HAVING count(e.position) <> 1
                          OR r.status <> CASE min(e.event_type) WHEN 'AccessGranted' THEN 'granted' ELSE 'rejected' END) x),
                   (SELECT count(*) FROM ledger_events)
            """, logger: logger)
        for try await (requests, undecided, notOne, events) in rows.decode((Int64, Int64, Int64, Int64).self) {
            result.proofRequests = Int(requests)
            result.undecided = Int(undecided)
            result.verdictsNotOne = Int(notOne)
            result.events = events
        }
        // Proofs answered 202: their status URL now gives the verdict.
        for proof in pending {
            do {
                if case .pending = try await api(proof.account).proofStatus(requestID: proof.requestId, in: proof.collaborationId) {
                    result.pendingStillPending += 1
                }
            } catch let error as LedgerError where error.code == "proof_rejected" {
                // Decided: refused.
            }
        }
        let audit = try await ViewAudit(client: client, store: store, logger: logger).run()
        result.diverged = audit.diverged
        result.divergence = audit.details
        return result
    }
}
