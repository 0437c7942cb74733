import Foundation

/// Reads `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
enum RetryAfter {
    /// The delay the server asked for, or `nil` when the header is absent or unreadable.
    /// A date in the past means "now" (zero); a huge number or a far date saturates, and never traps.
    static func delay(in headers: HeaderFields, now: Date) -> Duration? {
        guard let value = headers["Retry-After"]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
            return nil
        }
        if value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // Saturate absurd values instead of overflowing; anything this large exceeds every cap anyway.
            guard value.utf8.count <= 9, let seconds = Int(value) else { return .seconds(Int32.max) }
            return .seconds(seconds)
        }
        guard let date = HTTPDate.parse(value, now: now) else { return nil }
        let interval = date.timeIntervalSince(now)
        // The current date is injected and may be anything, so the difference may be huge or not a number.
        return interval > 0 ? Duration(saturatingMilliseconds: (interval * 1000).rounded(.up)) : .zero
    }
}
