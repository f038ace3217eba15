import Foundation
import LedgerDomain
import LedgerPostgres
import LedgerProjections
import LedgerStore
import LedgerTestSupport
import Logging
import PostgresNIO
import Testing

/// A command that gives a collaboration an earlier window end tells the expiry service directly
/// (`CollaborationStreams.windowsChannel`, the collaboration's id): the service expires it on time
/// even when the membership projection has not folded the window. Here no projector runs at
/// all, so the view never nominates the collaboration; only the command's notification can.
@Suite("Expiry told by the command")
struct ExpiryHintTests {
    @Test("no projector: a window set by a command is expired at its end (never before) by the service the command told")
    func toldByTheCommand() async throws {
        try await withTestStore { store, client, _ in
            let logger = Logger(label: "expiry-hint-test")
            let hub = NotificationHub(client: client, channel: ExpiryService.channel, logger: logger)
            let service = ExpiryService(client: client, store: store, wake: hub, logger: logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await hub.run() }
                group.addTask { try await service.run() }
                defer { group.cancelAll() }
                try await waitUntil(timeout: .seconds(60), "LISTEN up") { hub.isListening }
                try await waitUntil(timeout: .seconds(60), "the service holds the lease") {
                    try await AdvisoryLease(key: ExpiryService.leaseKey, client: client, logger: logger).isHeld()
                }

                // What any database login could send: no id, and an id of no collaboration. Dropped.
                try await client.query(
                    "SELECT pg_notify('ledger_expiry', 'not-an-id'), pg_notify('ledger_expiry', \(UUID().uuidString.lowercased()))")
                let collaborations = CollaborationStreams(store: store)
                let id = try await Self.start(store)
                let hash = try RootHash(bytes: [UInt8](repeating: 9, count: 32))
                let window = try AccessWindow(notBefore: nil, notAfter: Date().addingTimeInterval(1.5))
                _ = try await collaborations.decideAndAppend(id) { _ in
                    .init(
                        events: [.identityAdded(.init(rootHash: hash, window: window))],
                        metadata: EventMetadata(actor: "owner"))
                }
                try await waitUntil(timeout: .seconds(30), "the AccessExpired the service appends") {
                    try await store.readStream(Streams.collaboration(id)).contains { $0.type == "AccessExpired" }
                }
                let events = try await store.readStream(Streams.collaboration(id))
                let expired = events.filter { $0.type == "AccessExpired" }
                #expect(expired.allSatisfy { $0.recordedAtMicros >= window.notAfterMicros! }, "never before the window's end")
                let view = try await client.query("SELECT count(*) FROM proj_members").decode(Int64.self).reduce(0) { $1 }
                #expect(view == 0, "no projector: the view had nothing to nominate")
            }
        }
    }

    /// A started collaboration owned by "owner"; its id.
    static func start(_ store: EventStore) async throws -> String {
        let id = UUID().uuidString.lowercased()
        let command = StartCollaboration(localIdentifier: "l", title: "t", initiatorHandle: "h")
        guard
            case .started(let started) = command.started(
                collaborationId: id, owner: "owner", universalLink: "u", commitments: command.commitments())
        else { throw CancellationError() }
        _ = try await store.append(
            .init(
                streamId: Streams.collaboration(id), expectedVersion: .noStream,
                events: [CollaborationEvent.started(started).newEvent(metadata: .init())], state: CollaborationState(started: started).json)
        )
        return id
    }
}
