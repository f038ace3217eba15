import Foundation
import LedgerDomain
import LedgerWire
import Testing
import TransparencyLog

/// SPEC "Personal data and erasure" in the domain: every free text of a start is a commitment in
/// its event, reads show the plaintexts while they are kept and null after, evidence openings
/// check nested values, and the erasure's reason and the clients' ids follow their rules.
@Suite("Personal data")
struct PersonalDataTests {
    static let options = ShareOptions(
        summary: "Only family",
        groups: [
            .init(
                identifier: "permission", title: "Who edits", kind: .picker,
                options: [
                    .init(identifier: "rw", title: "Cousins", selected: true),
                    .init(identifier: "ro", title: "", selected: false),
                ])
        ])
    static let command = StartCollaboration(
        localIdentifier: "lisbon.doc", title: "Lisbon trip", initiatorHandle: "devin@example.com", initiatorName: "Devin",
        shareOptions: options)
    static let plaintexts = ["lisbon.doc", "Lisbon trip", "devin@example.com", "Devin", "Only family", "Who edits", "Cousins"]

    static func recorded(_ event: CollaborationEvent) -> RecordedEvent {
        recorded(type: event.type, data: event.json)
    }

    static func recorded(type: String, data: String) -> RecordedEvent {
        RecordedEvent(
            position: 1, streamId: Streams.collaboration("c"), version: 1, eventId: UUID(), type: type, data: data,
            metadata: EventMetadata(actor: "psn-owner").json(), recordedAtMicros: 0, hash: [])
    }

    /// A start commits every free text (local identifier, summary, group and option titles
    /// included); identifiers and selections stay plain.
    @Test("a start commits every free text (titles included); identifiers and selections stay plain")
    func startCommitsEverything() throws {
        let commitments = Self.command.commitments()
        #expect(commitments.map(\.kind) == [.title, .handle, .name, .localIdentifier, .summary, .groupTitle, .optionTitle, .optionTitle])
        let event = Self.command.started(collaborationId: "c", owner: "psn-owner", universalLink: "u", commitments: commitments)
        for text in Self.plaintexts { #expect(!event.json.contains(text), "\(text) in \(event.json)") }
        guard case .started(let started) = event else {
            Issue.record("not a start")
            return
        }
        #expect(started.shareOptions?.groups.first?.identifier == "permission")
        #expect(started.shareOptions?.selected == ["permission": ["rw"]])
        // Each field holds the commitment to its own value.
        let held =
            [started.localIdentifier, started.shareOptions?.summary, started.shareOptions?.groups[0].title]
            + (started.shareOptions?.groups[0].options.map(\.title) ?? [])
        let nested: [PersonalData.Commitment.Kind] = [.localIdentifier, .summary, .groupTitle, .optionTitle]
        #expect(held.compactMap { $0 } == commitments.filter { nested.contains($0.kind) }.map(\.text))
        #expect(Disclosure.references([Self.recorded(event)]).commitments == Set(commitments.map(\.text)))
        // An option title is required in a command (reads show erased ones as null).
        var untitled = Self.command
        untitled.shareOptions?.groups[0].options[0].title = nil
        #expect(throws: DomainError.self) { try untitled.validate() }
        try Self.command.validate()
    }

    @Test("reads show every plaintext while kept, null once erased; events from before commitments as they are")
    func disclosure() throws {
        let commitments = Self.command.commitments()
        let event = Self.recorded(
            Self.command.started(collaborationId: "c", owner: "psn-owner", universalLink: "u", commitments: commitments))
        let kept = Disclosure(
            accounts: ["psn-owner": "devin"], values: Dictionary(uniqueKeysWithValues: commitments.map { ($0.text, $0.value) }))
        let shown = try kept.show(event)
        let text = String(decoding: try JSONEncoder().encode(shown.data), as: UTF8.self)
        for value in Self.plaintexts { #expect(text.contains(value), "\(value) in \(text)") }
        #expect(shown.actor == "devin" && shown.data["owner"] == JSONValue.string("devin") && !text.contains("commitment:"))
        guard case .started(let stored) = try CollaborationEvent(event) else {
            Issue.record("not a start")
            return
        }
        #expect(Self.command.isRepeated(by: stored, disclosure: kept))
        var other = Self.command
        other.shareOptions?.groups[0].options[0].title = "Friends"
        #expect(!other.isRepeated(by: stored, disclosure: kept))

        let erased = try Disclosure().show(event)
        #expect(
            erased.actor == "erased:psn-owner" && erased.data["localIdentifier"] == JSONValue.null && erased.data["title"] == JSONValue.null
        )
        guard case .object(let options)? = erased.data["shareOptions"], case .array(let groups)? = options["groups"] else {
            Issue.record("no share options")
            return
        }
        #expect(
            options["summary"] == JSONValue.null && groups.first?["title"] == JSONValue.null
                && groups.first?["identifier"] == JSONValue.string("permission"))
        guard case .array(let shownOptions)? = groups.first?["options"] else {
            Issue.record("no options")
            return
        }
        #expect(
            shownOptions.map { $0["title"] ?? .string("absent") } == [.null, .null]
                && shownOptions.map { $0["selected"] ?? .null } == [.bool(true), .bool(false)])
        #expect(Disclosure().show(stored.shareOptions!).groups[0].options.map(\.title) == [nil, nil])

        // Before commitments: the plaintexts are the event's, shown as they are.
        let legacy = Self.recorded(
            type: "CollaborationStarted",
            data: #"{"collaborationId":"c","initiatorHandle":"h","localIdentifier":"old.doc","owner":"alice","shareOptions":"#
                + CanonicalJSON.encode(Self.options) + #","title":"Old","universalLink":"u"}"#)
        let old = try Disclosure().show(legacy)
        #expect(old.data["localIdentifier"] == JSONValue.string("old.doc") && old.data["owner"] == JSONValue.string("alice"))
        #expect(Disclosure().show(Self.options) == Self.options)
    }

    @Test("evidence openings check nested values; an altered one fails")
    func openings() throws {
        let commitments = Self.command.commitments()
        let event = Self.command.started(collaborationId: "c", owner: "psn-owner", universalLink: "u", commitments: commitments)
        let openings = commitments.map { Evidence.Opening(commitment: $0.text, value: $0.value, opening: Base64.encode($0.opening)) }
        try EvidenceVerifier.checkOpenings(openings, data: event.json, type: event.type)
        let option = try #require(openings.firstIndex { $0.value == "Cousins" })
        var altered = openings
        altered[option].value = "Strangers"
        #expect(throws: EvidenceVerifier.Failure.self) { try EvidenceVerifier.checkOpenings(altered, data: event.json, type: event.type) }
    }

    @Test("an erasure's reason is a short reference: ^[A-Za-z0-9._:/#-]{1,64}$")
    func reasons() {
        for reason in ["TICKET-17", "gdpr/2026#17:a.b_c-d", "a", String(repeating: "Z", count: 64)] {
            #expect(ErasureRequest.isValidReason(reason), "\(reason)")
        }
        for reason in ["", "request 17", String(repeating: "a", count: 65), "TICKET-1\n", "tïcket", "a@b", "<b>", "a;b", "a\u{0}"] {
            #expect(!ErasureRequest.isValidReason(reason), "\(reason)")
        }
        #expect(ErasureRequest.reasonRule.contains("^[A-Za-z0-9._:/#-]{1,64}$"))
    }

    @Test("an erasure's answer: four fields the first time, {\"held\": false} after; never a pseudonym")
    func answers() throws {
        let encoder = APIJSON.encoder()
        let first = Erasure(
            erasedAt: Date(timeIntervalSince1970: 1_700_000_000), position: 42, values: [.init(kind: "title", count: 1)],
            unerasedPositions: [])
        let text = String(decoding: try encoder.encode(first), as: UTF8.self)
        #expect(
            text == #"{"erasedAt":"2023-11-14T22:13:20.000Z","position":42,"unerasedPositions":[],"values":[{"count":1,"kind":"title"}]}"#)
        #expect(try APIJSON.decoder().decode(Erasure.self, from: Data(text.utf8)) == first)
        #expect(String(decoding: try encoder.encode(Erasure.notHeld()), as: UTF8.self) == #"{"held":false}"#)
        let decoded = try APIJSON.decoder().decode(Erasure.self, from: Data(#"{"held":false}"#.utf8))
        #expect(decoded == .notHeld() && !decoded.held && decoded.position == nil)
        #expect(
            String(decoding: try encoder.encode(Erasure.notHeld(unerasedPositions: [3])), as: UTF8.self)
                == #"{"held":false,"unerasedPositions":[3]}"#)
    }

    @Test("clients' Idempotency-Key and X-Request-Id are kept as lowercase hex SHA-256")
    func clientTexts() {
        #expect(PersonalData.clientTextDigest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(PersonalData.clientTextDigest("").count == 64)
    }
}
