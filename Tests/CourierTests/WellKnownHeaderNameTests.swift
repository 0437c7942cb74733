import Testing

@testable import Courier

/// A well-known field name is recognized in any case without being lower-cased (`HeaderFields+KnownNames.swift`);
/// what that skips must still hold: its canonical name is exactly what lower-casing gives, lookups ignore case, and
/// a name that only looks like a well-known one (another byte in one place, a control byte where a `-` is) is not
/// taken for it.
@Suite struct WellKnownHeaderNameTests {
    /// Every name the table knows, and common ones it does not.
    static let names = [
        "age", "date", "etag", "host", "vary", "accept", "server", "expires", "location", "connection", "keep-alive",
        "set-cookie", "user-agent", "content-type", "accept-ranges", "authorization", "cache-control", "content-range",
        "if-none-match", "last-modified", "content-length", "accept-encoding", "content-encoding", "if-modified-since",
        "transfer-encoding", "via", "link", "allow", "pragma", "x-request-id", "www-authenticate", "content-language",
        "strict-transport-security", "a", "ab", "x-cache",
    ]

    /// The name in lower case, upper case, title case and alternating case.
    static func spellings(of name: String) -> [String] {
        let title = name.split(separator: "-", omittingEmptySubsequences: false)
            .map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: "-")
        let alternating = String(
            name.enumerated().map { $0.offset.isMultiple(of: 2) ? Character($0.element.uppercased()) : $0.element })
        return [name, name.uppercased(), title, alternating]
    }

    @Test(arguments: names)
    func aNameInAnyCaseHasTheLowerCaseCanonicalNameAndIsFoundByAnySpelling(_ name: String) {
        for spelling in Self.spellings(of: name) {
            let field = HeaderFields.Field(name: spelling, value: "v")
            #expect(field.canonicalName == name, "\(spelling)")
            #expect(field.name == spelling)
            let headers = HeaderFields([(spelling, "v")])
            for other in Self.spellings(of: name) { #expect(headers[other] == "v", "\(spelling) by \(other)") }
        }
    }

    @Test(arguments: names.filter { $0.utf8.count >= 3 })
    func aNameOneByteAwayIsNotTakenForTheWellKnownOne(_ name: String) {
        let bytes = Array(name.utf8)
        for index in bytes.indices {
            var changed = bytes
            // A carriage return differs from `-` only in the case bit; a letter differs from the next one in another
            // bit; `@` and `[` (0x40, 0x5B) sit just outside `A`–`Z`; a non-ASCII byte never folds.
            let replacements: [UInt8] =
                bytes[index] == UInt8(ascii: "-") ? [0x0D, 0x0C, 0x2C] : [bytes[index] ^ 0x01, 0x40, 0x5B, 0xC3]
            for replacement in replacements {
                changed[index] = replacement
                let spelling = String(decoding: changed, as: UTF8.self)
                let field = HeaderFields.Field(name: spelling, value: "v")
                #expect(field.canonicalName == spelling.lowercased(), "\(Array(spelling.utf8))")
                #expect(field.canonicalName != name)
                #expect(!HeaderFields([(spelling, "v")]).contains(name))
            }
        }
    }

    @Test func aNameOfAnotherLengthIsNotTakenForAWellKnownOne() {
        for name in ["content-lengths", "content-lengt", "dates", "dat", "Etags", "x-content-type"] {
            #expect(HeaderFields.Field(name: name, value: "v").canonicalName == name.lowercased())
        }
    }
}
