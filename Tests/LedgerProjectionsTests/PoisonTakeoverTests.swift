import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerStore
import LedgerTestSupport
import Testing

@testable import LedgerProjections

/// A poison event met by a worker that holds no lease on the projection: its failed step rolled
/// back its own take of the lease, and the stop is recorded all the same (`isolatePoison` takes
/// the lease in the statement that records it), once, by one worker.
@Suite("Poison met by a fresh worker")
struct PoisonTakeoverTests {
    @Test("the first event a projection cannot apply, met by a worker that never stepped: stopped at it")
    func freshWorkerStops() async throws {
        try await withTestStore { store, client, _ in
            // An IdentityAdded without a root hash, first in the log: the membership fold cannot place it.
            let poison = try await store.append(
                .init(
                    streamId: Streams.collaboration(UUID().uuidString.lowercased()), expectedVersion: .any,
                    events: [NewEvent(type: "IdentityAdded", data: #"{"note":"no root hash"}"#, metadata: "{}")]))
            #expect(poison.firstPosition == 1)
            let events = NotificationHub(client: client, channel: EventStore.channel, logger: logger)
            let worker = ProjectorWorker(client: client, events: events, logger: logger, batchSize: 40)
            _ = try await worker.step(.membership)
            let membership = try await projection(client, .membership)
            #expect(membership.status == "stopped", "the stop is recorded though no step of this worker committed")
            #expect(membership.errorPosition == 1 && membership.position == 0)
            // Another fresh worker finds it stopped, and records nothing more.
            let other = ProjectorWorker(client: client, events: events, logger: logger, batchSize: 40)
            #expect(try await other.step(.membership) == false)
            #expect(try await projection(client, .membership).errorPosition == 1)
        }
    }
}
