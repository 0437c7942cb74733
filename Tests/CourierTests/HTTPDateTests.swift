import Foundation
import Testing

@testable import Courier

/// Tests for `HTTPDate` (RFC 9110 §5.6.7): all three accepted formats, range validation, the RFC 850 two-digit
/// year rule, IMF-fixdate formatting, and a seeded fuzz run.
@Suite("HTTPDate")
struct HTTPDateTests {
    /// Fixed "now" (2025-06-15T12:00:00Z) so RFC 850 century resolution is deterministic.
    static let now = Date(timeIntervalSince1970: 1_749_988_800)

    /// Inputs that must parse, with the exact expected seconds since 1970 (computed independently with Python's
    /// `calendar.timegm`).
    static let validCases: [(String, Int)] = [
        ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777),  // IMF-fixdate, RFC 9110 example
        ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777),  // RFC 850, RFC 9110 example
        ("Sun Nov  6 08:49:37 1994", 784_111_777),  // asctime, RFC 9110 example
        ("Sun Nov 06 08:49:37 1994", 784_111_777),  // asctime with a two-digit day
        ("  Sun, 06 Nov 1994 08:49:37 GMT\t\r\n", 784_111_777),  // surrounding whitespace
        ("sun, 06 nov 1994 08:49:37 gmt", 784_111_777),  // case-insensitive names
        ("SUNDAY, 06-NOV-94 08:49:37 GMT", 784_111_777),
        ("Mon, 06 Nov 1994 08:49:37 GMT", 784_111_777),  // wrong weekday is ignored
        ("Thu, 29 Feb 2024 00:00:00 GMT", 1_709_164_800),  // leap year
        ("Tue, 29 Feb 2000 23:59:59 GMT", 951_868_799),  // divisible by 400: leap
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
        ("Wed, 31 Dec 1969 23:59:59 GMT", -1),
        ("Thu, 01 Mar 1900 00:00:00 GMT", -2_203_891_200),
        ("Mon, 01 Jan 0001 00:00:00 GMT", -62_135_596_800),
        ("Fri, 31 Dec 9999 23:59:59 GMT", 253_402_300_799),
        ("Tue, 19 Jan 2038 03:14:08 GMT", 2_147_483_648),  // past Int32 seconds
        ("Sat, 31 Dec 2016 23:59:60 GMT", 1_483_228_799),  // leap second clamps to :59
        ("Saturday, 15-Jun-75 12:00:00 GMT", 3_327_825_600),  // exactly 50 years ahead: stays in future
        ("Sunday, 15-Jun-75 12:00:01 GMT", 172_065_601),  // more than 50 years ahead: previous century
        ("Friday, 31-Dec-99 23:59:59 GMT", 946_684_799),
        ("Monday, 01-Jan-01 00:00:00 GMT", 978_307_200),
        ("Wednesday, 29-Feb-24 00:00:00 GMT", 1_709_164_800),
        ("Thu Feb 29 00:00:00 2024", 1_709_164_800),
    ]

    /// Inputs that must be rejected.
    static let invalidCases: [String] = [
        "", "   ", "GMT", "Sun",
        "Sun, 30 Feb 1994 08:49:37 GMT",  // Feb 30
        "Thu, 29 Feb 1900 00:00:00 GMT",  // 1900 is not a leap year
        "Wed, 31 Apr 2024 00:00:00 GMT",  // April has 30 days
        "Sun, 00 Nov 1994 08:49:37 GMT",
        "Sun, 32 Dec 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:60:00 GMT",
        "Sun, 06 Nov 1994 08:49:61 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT x",  // trailing garbage
        "Sun, 06 Nov 1994 08:49:37 GMTT",
        "Sun, 06 Nov 1994 08:49:37 GMT\0",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 1994 08:49:37",
        "Sun, 6 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun,06 Nov 1994 08:49:37 GMT",
        "Sun,  06 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 8:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 06 November 1994 08:49:37 GMT",
        "Xyz, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06 Nov 1994 08:49:37 GMT",  // long weekday with IMF layout
        "Sun, 06-Nov-94 08:49:37 GMT",  // short weekday with RFC 850 layout
        "Sundae, 06-Nov-94 08:49:37 GMT",
        "Sun Nov 6 08:49:37 1994",  // asctime single-digit day needs a leading space
        "Sun Nov  6 08:49:37 1994 GMT",
        "Sun Nov  6 08:49:37 94",
        "Sün, 06 Nov 1994 08:49:37 GMT",
        "Sun, ０６ Nov 1994 08:49:37 GMT",  // full-width digits
        "Sun, 99999999999999999999 Nov 1994 08:49:37 GMT",
        "Sun, -6 Nov 1994 08:49:37 GMT",
        String(repeating: "Sun, 06 Nov 1994 08:49:37 GMT", count: 100),
    ]

    /// Every valid form yields the exact instant.
    @Test(arguments: validCases)
    func parsesValidDate(input: String, expected: Int) {
        #expect(HTTPDate.parse(input, now: Self.now)?.timeIntervalSince1970 == TimeInterval(expected))
    }

    /// Malformed or out-of-range inputs yield `nil`.
    @Test(arguments: invalidCases)
    func rejectsInvalidDate(input: String) {
        #expect(HTTPDate.parse(input, now: Self.now) == nil)
    }

    /// The two-digit year is resolved relative to the supplied `now` (RFC 9110 §5.6.7).
    @Test func rfc850CenturyDependsOnNow() {
        let input = "Thursday, 01-Jan-70 00:00:00 GMT"
        #expect(HTTPDate.parse(input, now: Self.now)?.timeIntervalSince1970 == 3_155_760_000)  // 2070
        let in2030 = Date(timeIntervalSince1970: 1_893_456_000)  // 2030-01-01: 2070 is 40 years ahead
        #expect(HTTPDate.parse(input, now: in2030)?.timeIntervalSince1970 == 3_155_760_000)
        let in2019 = Date(timeIntervalSince1970: 1_546_300_800)  // 2019-01-01: 2070 is 51 years ahead
        #expect(HTTPDate.parse(input, now: in2019)?.timeIntervalSince1970 == 0)
    }

    /// A substring is accepted without first being copied by the caller.
    @Test func parsesSubstring() {
        let header = "Date: Sun, 06 Nov 1994 08:49:37 GMT"
        let value = header[header.index(header.startIndex, offsetBy: 5)...]
        #expect(HTTPDate.parse(value, now: Self.now)?.timeIntervalSince1970 == 784_111_777)
    }

    /// Formatting produces IMF-fixdate exactly, truncating fractions and clamping to 4-digit years.
    @Test(arguments: [
        (784_111_777.0, "Sun, 06 Nov 1994 08:49:37 GMT"),
        (0.0, "Thu, 01 Jan 1970 00:00:00 GMT"),
        (0.999, "Thu, 01 Jan 1970 00:00:00 GMT"),
        (-0.5, "Wed, 31 Dec 1969 23:59:59 GMT"),
        (951_868_799.0, "Tue, 29 Feb 2000 23:59:59 GMT"),
        (2_147_483_648.0, "Tue, 19 Jan 2038 03:14:08 GMT"),
        (1e20, "Fri, 31 Dec 9999 23:59:59 GMT"),
        (-1e20, "Mon, 01 Jan 0001 00:00:00 GMT"),
        (Double.infinity, "Fri, 31 Dec 9999 23:59:59 GMT"),
        (Double.nan, "Thu, 01 Jan 1970 00:00:00 GMT"),
    ])
    func formatsIMFFixdate(seconds: Double, expected: String) {
        #expect(HTTPDate.format(Date(timeIntervalSince1970: seconds)) == expected)
    }

    /// `parse(format(d))` returns `d` rounded down to whole seconds, for seeded random instants across the range.
    @Test func roundTrips() {
        var rng = SplitMix64(seed: 0x0DA7_E5EE_D000_0001)
        for _ in 0..<5_000 {
            let seconds = Int64(bitPattern: rng.next() % 315_537_897_600) - 62_135_596_800
            let date = Date(timeIntervalSince1970: TimeInterval(seconds) + 0.25)
            let text = HTTPDate.format(date)
            #expect(text.utf8.count == 29)
            #expect(HTTPDate.parse(text, now: Self.now)?.timeIntervalSince1970 == TimeInterval(seconds), "\(text)")
            // Day and month names match in any case (every name occurs among 5,000 random dates).
            for variant in [text.uppercased(), text.lowercased()] {
                #expect(HTTPDate.parse(variant, now: Self.now)?.timeIntervalSince1970 == TimeInterval(seconds))
            }
        }
        // A name one letter off is refused, in either position.
        #expect(HTTPDate.parse("Sun, 06 Nox 1994 08:49:37 GMT", now: Self.now) == nil)
        #expect(HTTPDate.parse("Sum, 06 Nov 1994 08:49:37 GMT", now: Self.now) == nil)
        #expect(HTTPDate.parse("Sun, 06 N@v 1994 08:49:37 GMT", now: Self.now) == nil)
    }

    /// 10,000 seeded random strings (date fragments, mutations of valid dates, random scalars): no crash, the
    /// result is deterministic, and anything accepted survives a format/parse round trip.
    @Test func fuzz() {
        let fragments = [
            "Sun", "Sunday", "Nov", "nov", ",", " ", "  ", "-", ":", "06", "6", "94", "1994", "08:49:37", "GMT",
            "24", "60", "99", "Feb", "29", "\t", "\0", "é", "🙂", "9999999999999999999999", "Wednesday",
        ]
        let seeds = Self.validCases.map(\.0)
        var rng = SplitMix64(seed: 42)
        for _ in 0..<10_000 {
            var scalars: [Unicode.Scalar] = []
            if rng.next() % 3 == 0 {
                scalars = Array(seeds[Int(rng.next() % UInt64(seeds.count))].unicodeScalars)
                for _ in 0..<(1 + rng.next() % 3) where !scalars.isEmpty {
                    scalars[Int(rng.next() % UInt64(scalars.count))] = Unicode.Scalar(UInt8(rng.next() % 128))
                }
            } else {
                for _ in 0..<(rng.next() % 12) {
                    if rng.next() % 4 == 0 {
                        scalars.append(Unicode.Scalar(UInt32(rng.next() % 0xD800)) ?? "?")
                    } else {
                        scalars += fragments[Int(rng.next() % UInt64(fragments.count))].unicodeScalars
                    }
                }
            }
            var input = ""
            input.unicodeScalars.append(contentsOf: scalars)
            let first = HTTPDate.parse(input, now: Self.now)
            #expect(first == HTTPDate.parse(input, now: Self.now), "\(input.debugDescription)")
            if let first {
                #expect(HTTPDate.parse(HTTPDate.format(first), now: Self.now) == first, "\(input.debugDescription)")
            }
        }
    }
}
