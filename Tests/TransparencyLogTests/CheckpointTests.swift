import Foundation
import Testing
import TransparencyLog

/// Signed notes and checkpoints against published examples (Go's `sumdb/note` documentation,
/// the C2SP text) and every way to break them.
struct CheckpointTests {
    // golang.org/x/mod/sumdb/note's documented example.
    static let goVerifier = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
    static let goSigner = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
    static let goText = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n"
    static let goNote =
        goText + "\n\u{2014} PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"
    // The C2SP signed-note example.
    static let specVerifier = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"
    static let specNote =
        "This is an example message.\n\n\u{2014} example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n"

    @Test func publishedNotesOpen() throws {
        #expect(try SignedNote.open(Self.goNote, verifier: NoteVerifier(Self.goVerifier)) == Self.goText)
        #expect(try SignedNote.open(Self.specNote, verifier: NoteVerifier(Self.specVerifier)) == "This is an example message.\n")
    }

    @Test func ourSignerMatchesGo() throws {
        let signer = try NoteSigner(Self.goSigner)
        #expect(signer.verifier.text == Self.goVerifier)
        #expect(signer.text == Self.goSigner)
        let note = try signer.sign(Self.goText)
        #expect(try SignedNote.open(note, verifier: NoteVerifier(Self.goVerifier)) == Self.goText)
        #if os(Linux)
            // BoringSSL's Ed25519 is deterministic (RFC 8032), so the note is Go's byte for byte.
            #expect(note == Self.goNote)
        #endif
    }

    @Test func malformedKeysAreRefused() {
        for bad in [
            "", "PeterNeumann", "PeterNeumann+c74f20a3", "PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
            "Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
            "PeterNeumann+c74f20a3+AhRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
            "PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
        ] {
            #expect(throws: NoteError.self, "\(bad)") { try NoteVerifier(bad) }
        }
        #expect(throws: NoteError.self) { try NoteSigner("PRIVATE+KEY+PeterNeumann+c74f20a4+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz") }
        #expect(throws: NoteError.self) { try NoteSigner(Self.goVerifier) }
    }

    @Test func brokenNotesAreRefused() throws {
        let verifier = try NoteVerifier(Self.goVerifier)
        let other = try NoteSigner(name: "PeterNeumann")
        let cases: [(String, String)] = [
            ("text changed", Self.goNote.replacingOccurrences(of: "answer", with: "Answer")),
            ("signature bit flipped", Self.goNote.replacingOccurrences(of: "x08go/ZJ", with: "x08go/ZK")),
            ("no blank line", Self.goNote.replacingOccurrences(of: "is.\n\n", with: "is.\n")),
            ("no final newline", String(Self.goNote.dropLast())),
            ("hyphen for em dash", Self.goNote.replacingOccurrences(of: "\u{2014}", with: "-")),
            ("control character", Self.goNote.replacingOccurrences(of: "answer", with: "ans\u{7}wer")),
            ("signed by another key of the same name", try other.sign(Self.goText)),
            ("no signature", Self.goText + "\n"),
        ]
        for (what, note) in cases {
            #expect(throws: NoteError.self, "\(what)") { try SignedNote.open(note, verifier: verifier) }
        }
        // Another key's signature is ignored; ours still opens the note.
        let cosigned = Self.goNote + String(try other.sign(Self.goText).split(separator: "\n").last!) + "\n"
        #expect(try SignedNote.open(cosigned, verifier: verifier) == Self.goText)
    }

    @Test func checkpointsRoundTrip() throws {
        let signer = try NoteSigner(name: "ledger.example/ledger")
        let root = MerkleTree.leafHash([1, 2, 3])
        let note = try signer.sign(Checkpoint(origin: signer.name, size: 1234, rootHash: root).text)
        let lines = note.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines[0] == "ledger.example/ledger" && lines[1] == "1234" && lines[2] == Substring(Base64.encode(root)))
        #expect(lines[3] == "" && lines[4].hasPrefix("\u{2014} ledger.example/ledger "))
        let opened = try Checkpoint.open(note, verifier: signer.verifier)
        #expect(opened == Checkpoint(origin: "ledger.example/ledger", size: 1234, rootHash: root))

        for bad in [
            "o\n012\n\(Base64.encode(root))\n", "o\n-1\n\(Base64.encode(root))\n", "o\n12\nAAAA\n", "o\n12\n",
            "\n12\n\(Base64.encode(root))\n",
        ] {
            #expect(throws: NoteError.self, "\(bad.debugDescription)") { try Checkpoint(text: bad) }
        }
        let wrongOrigin = try signer.sign(Checkpoint(origin: "elsewhere/log", size: 1, rootHash: root).text)
        #expect(throws: NoteError.self) { try Checkpoint.open(wrongOrigin, verifier: signer.verifier) }
    }
}
