import Foundation
import Testing

@testable import Courier

/// An IMF-fixdate of exactly 29 bytes is read at fixed offsets, the common case of every stored response; anything
/// else goes through the general parser. Both must agree on every input: the same text with a leading space is 30
/// bytes, never read at fixed offsets, and trimmed to the same 29 bytes by the general parser.
@Suite struct HTTPDateFixedLayoutTests {
    private let now = Date(timeIntervalSince1970: 1_749_988_800)

    /// Each byte of valid dates replaced, one at a time, by bytes that matter to the grammar (digits, letters in both
    /// cases, the separators, a byte outside ASCII): the fixed-offset reading accepts exactly what the general parser
    /// accepts, with the same instant.
    @Test func theFixedLayoutAgreesWithTheGeneralParserOnEveryOneByteChange() {
        let dates = ["Sun, 06 Nov 1994 08:49:37 GMT", "thu, 29 feb 2024 23:59:60 gmt", "Fri, 31 Dec 9999 23:59:59 GMT"]
        let replacements = Array("0159aAzZgGmMtTsSnN ,:-\t".utf8) + [0x00, 0x7F, 0xC3, 0x40, 0x60, 0x5B]
        var accepted = 0
        for text in dates {
            let bytes = Array(text.utf8)
            for position in bytes.indices {
                for replacement in replacements {
                    var changed = bytes
                    changed[position] = replacement
                    let candidate = String(decoding: changed, as: UTF8.self)
                    guard candidate.utf8.count == 29 else { continue }
                    let fixed = HTTPDate.parse(candidate, now: now)
                    let general = HTTPDate.parse(" " + candidate, now: now)
                    #expect(fixed == general, "\(candidate)")
                    if fixed != nil { accepted += 1 }
                }
            }
        }
        #expect(accepted > 100, "the changes that keep a valid date (a digit for a digit, a letter's case) parse")
    }

    @Test func aValidDateParsesToItsInstant() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.parse("Thu, 31 Feb 2024 00:00:00 GMT", now: now) == nil, "no 31 February")
        #expect(HTTPDate.parse("Xyz, 06 Nov 1994 08:49:37 GMT", now: now) == nil, "not a day name")
    }
}
