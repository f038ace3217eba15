import Foundation

/// How the API writes JSON and times: RFC 3339 with milliseconds, stable key order.
public enum APIJSON {
    /// The nearest millisecond, written exactly: a formatter cuts the binary fraction, so a time
    /// sent as `.570` (a `Date` a hair below it) came back `.569`.
    public static func time(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        guard interval.isFinite, abs(interval) < 1e13 else {
            return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        }
        // Never rounded up into the year 10000 (RFC 3339 ends with 9999).
        let (seconds, millis) = min(Int64((interval * 1000).rounded()), 253_402_300_799_999).quotientAndRemainder(dividingBy: 1000)
        let (whole, fraction) = millis < 0 ? (seconds - 1, millis + 1000) : (seconds, millis)
        let text = Date(timeIntervalSince1970: Double(whole)).formatted(Date.ISO8601FormatStyle())  // …:SSZ
        let digits = String(fraction)
        return text.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(time(date))
        }
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// Reads what `encoder` writes (and RFC 3339 times without fractional seconds): for the SDK,
    /// and for webhook receivers decoding a delivery.
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            if let date = try? Date(text, strategy: .iso8601) { return date }
            if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an RFC 3339 date: \(text)"))
        }
        return decoder
    }
}
