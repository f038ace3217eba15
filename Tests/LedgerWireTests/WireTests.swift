import Foundation
import LedgerWire
import Testing

/// The wire's own logic: the webhook signature a receiver checks, and the error catalogue.
struct WireTests {
    @Test("a signature checks for its body, secret and time; any other body, secret, time or bad header refused")
    func webhookSignature() throws {
        let body = Data(#"{"position":7}"#.utf8)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let header = WebhookSignature.header(secret: "whsec_a", body: body, time: now)
        try WebhookSignature.verify(header, body: body, secret: "whsec_a", now: now.addingTimeInterval(299))
        #expect(throws: WebhookSignature.Failure.mismatch) {
            try WebhookSignature.verify(header, body: Data(#"{"position":8}"#.utf8), secret: "whsec_a", now: now)
        }
        #expect(throws: WebhookSignature.Failure.mismatch) { try WebhookSignature.verify(header, body: body, secret: "whsec_b", now: now) }
        #expect(throws: WebhookSignature.Failure.outsideTolerance(seconds: -301)) {
            try WebhookSignature.verify(header, body: body, secret: "whsec_a", now: now.addingTimeInterval(-301))
        }
        for malformed in [
            "", "t=1", "v1=00", "t=x,v1=" + String(repeating: "0", count: 64), "t=1,t=2,v1=" + String(repeating: "0", count: 64),
        ] {
            #expect(throws: WebhookSignature.Failure.malformed) {
                try WebhookSignature.verify(malformed, body: body, secret: "whsec_a", now: now)
            }
        }
    }

    @Test("every code the server sends has a 4xx or 5xx status and a meaning; codes are unique")
    func catalogue() {
        #expect(Set(ErrorCode.served.map(\.rawValue)).count == ErrorCode.served.count)
        for code in ErrorCode.served {
            #expect((400...599).contains(code.status), "\(code)")
            #expect(!code.meaning.isEmpty)
        }
        #expect(ErrorCode(rawValue: "proof_rejected")?.status == 403)
        #expect(!ErrorCode.served.contains(.unknown))
    }
}
