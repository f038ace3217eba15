import Crypto
import Foundation

/// The signature of a webhook delivery (SPEC "Change feed and webhooks"), written by the
/// ledger and checked by the receiver:
///
///     Ledger-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>
///
/// The key is the webhook's secret as shown at registration (its UTF-8 bytes); the body is
/// the request's bytes exactly as received. `t` is signed with the body, so a receiver that
/// refuses an old `t` also refuses a captured delivery replayed later.
public enum WebhookSignature {
    public static let headerName = "Ledger-Signature"
    /// A delivery's id: the same for every attempt at one event, so a receiver can drop repeats.
    public static let deliveryHeaderName = "Ledger-Delivery"

    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// Not `t=<integer>` and at least one `v1=<64 hex digits>`.
        case malformed
        /// `t` is further than the tolerance from now (seconds off).
        case outsideTolerance(seconds: Int64)
        /// No `v1` is the body's HMAC under this secret.
        case mismatch

        public var description: String {
            switch self {
            case .malformed: "the Ledger-Signature header is not t=<unix seconds>,v1=<hex>"
            case .outsideTolerance(let seconds): "the signature's time is \(seconds) s from now, outside the tolerance"
            case .mismatch: "the signature does not match the body under this secret"
            }
        }
    }

    /// The header for `body` signed at `time`.
    public static func header(secret: String, body: some DataProtocol, time: Date) -> String {
        let t = Int64(time.timeIntervalSince1970.rounded(.down))
        let code = HMAC<SHA256>.authenticationCode(for: signed(t, body), using: key(secret))
        return "t=\(t),v1=" + code.map { String(format: "%02x", $0) }.joined()
    }

    /// Checks a delivery: throws `Failure` unless `header` signs `body` under `secret` at a time
    /// within `tolerance` seconds of `now`.
    public static func verify(
        _ header: String, body: some DataProtocol, secret: String, tolerance: TimeInterval = 300, now: Date = Date()
    ) throws {
        var t: Int64?
        var codes: [[UInt8]] = []
        for part in header.split(separator: ",") {
            let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { throw Failure.malformed }
            switch pair[0] {
            case "t":
                guard t == nil, let value = Int64(pair[1]) else { throw Failure.malformed }
                t = value
            case "v1":
                guard let code = hex(pair[1]), code.count == 32 else { throw Failure.malformed }
                codes.append(code)
            default: continue  // other schemes, for later versions
            }
        }
        guard let t, !codes.isEmpty else { throw Failure.malformed }
        // A hostile `t` (near Int64.min) must not trap before the signature is checked.
        let (offset, overflow) = Int64(now.timeIntervalSince1970.rounded(.down)).subtractingReportingOverflow(t)
        guard !overflow, offset != .min, Double(abs(offset)) <= tolerance else {
            throw Failure.outsideTolerance(seconds: overflow ? .max : offset)
        }
        let message = signed(t, body)
        // Constant time per comparison (HMAC.isValidAuthenticationCode).
        guard codes.contains(where: { HMAC<SHA256>.isValidAuthenticationCode($0, authenticating: message, using: key(secret)) })
        else { throw Failure.mismatch }
    }

    static func key(_ secret: String) -> SymmetricKey { SymmetricKey(data: Data(secret.utf8)) }

    static func signed(_ t: Int64, _ body: some DataProtocol) -> Data {
        var message = Data("\(t).".utf8)
        message.append(contentsOf: body)
        return message
    }

    static func hex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        let isHex = { (c: UInt8) in (48...57).contains(c) || (97...102).contains(c) || (65...70).contains(c) }
        guard digits.count % 2 == 0, digits.allSatisfy(isHex) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
