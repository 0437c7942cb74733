import Foundation

/// Replaces credentials with `<redacted>` in the URLs, headers and text that events, errors and descriptions carry.
///
/// What is secret comes from one ``CredentialPolicy``: header values of its ``CredentialPolicy/headerNames``; query
/// parameter values of its ``CredentialPolicy/queryParameters`` (compared ignoring case and percent-encoding)
/// wherever a URL appears in text; URL passwords (`https://user:<redacted>@host`); and the credential after
/// `Bearer ` or `Basic `. Secrets are found by name, never by value. Redacting twice changes nothing.
struct Redaction: Sendable {
    static let placeholder = "<redacted>"

    /// What every value printed on its own redacts: ``CredentialPolicy/standard``.
    static let standard = Redaction(.standard)

    /// Lower-cased header names whose values are hidden.
    let headerNames: Set<String>
    /// Lower-cased query parameter names whose values are hidden.
    let queryParameters: Set<String>

    init(_ policy: CredentialPolicy) {
        headerNames = policy.headerNames
        queryParameters = policy.queryParameters
    }

    // MARK: Redacting

    /// `headers` with the values of secret fields replaced.
    func redact(_ headers: HeaderFields) -> HeaderFields {
        HeaderFields(
            headers.fields.map { field in
                (field.name, headerNames.contains(field.canonicalName) ? Self.placeholder : field.value)
            })
    }

    /// The URL as text, with secret query values and any password replaced.
    func redact(_ url: URL) -> String {
        redact(url.absoluteString)
    }

    /// `text` with every secret query value, URL password and `Bearer`/`Basic` credential in it replaced.
    ///
    /// Works on UTF-8 bytes: every delimiter is ASCII, so cutting at one never splits a character.
    func redact(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        var index = 0
        var copied = 0
        while index < bytes.count {
            guard let (kept, resume) = secret(in: bytes, at: index) else {
                index += 1
                continue
            }
            if output.isEmpty { output.reserveCapacity(bytes.count + 16) }
            output += bytes[copied..<kept]
            output += Self.placeholderBytes
            index = resume
            copied = resume
        }
        guard copied > 0 else { return text }
        output += bytes[copied...]
        return String(decoding: output, as: UTF8.self)
    }

    // MARK: Scanning

    private static let placeholderBytes = Array(placeholder.utf8)

    /// When a secret starts at `index`: the end of what is kept before the placeholder, and where to go on.
    private func secret(in bytes: [UInt8], at index: Int) -> (kept: Int, resume: Int)? {
        switch bytes[index] {
        case UInt8(ascii: "?"), UInt8(ascii: "&"), UInt8(ascii: ";"):
            return queryValue(in: bytes, nameStart: index + 1)
        case UInt8(ascii: ":") where Self.hasPrefix(bytes, "//", at: index + 1, ignoringCase: false):
            return password(in: bytes, authorityStart: index + 3)
        case UInt8(ascii: "B"), UInt8(ascii: "b"):
            for (scheme, ignoringCase) in [("bearer ", true), ("Basic ", false)]
            where Self.hasPrefix(bytes, scheme, at: index, ignoringCase: ignoringCase) {
                return value(in: bytes, from: index + scheme.utf8.count, endingAt: Self.isWhitespace)
            }
            return nil
        default:
            return nil
        }
    }

    /// `name=value` right after a query separator, when `name` is secret.
    private func queryValue(in bytes: [UInt8], nameStart: Int) -> (Int, Int)? {
        var equals = nameStart
        while equals < bytes.count, equals - nameStart < 64, bytes[equals] != UInt8(ascii: "="),
            !Self.endsName(bytes[equals])
        {
            equals += 1
        }
        guard equals < bytes.count, bytes[equals] == UInt8(ascii: "="), equals > nameStart else { return nil }
        let name = String(decoding: bytes[nameStart..<equals], as: UTF8.self)
        guard queryParameters.contains((name.removingPercentEncoding ?? name).lowercased()) else { return nil }
        return value(in: bytes, from: equals + 1, endingAt: Self.endsQueryValue)
    }

    /// The password of `scheme://user:password@host`, if the authority has one.
    private func password(in bytes: [UInt8], authorityStart: Int) -> (Int, Int)? {
        var end = authorityStart
        while end < bytes.count, !Self.endsAuthority(bytes[end]) { end += 1 }
        guard let at = bytes[authorityStart..<end].lastIndex(of: UInt8(ascii: "@")),
            let colon = bytes[authorityStart..<at].firstIndex(of: UInt8(ascii: ":")),
            !Self.hasPrefix(bytes, Self.placeholder, at: colon + 1, ignoringCase: false)
        else { return nil }
        return (colon + 1, at)
    }

    /// The value starting at `start` up to the first byte `ends`; `nil` when it is empty or already redacted.
    private func value(in bytes: [UInt8], from start: Int, endingAt ends: (UInt8) -> Bool) -> (Int, Int)? {
        guard !Self.hasPrefix(bytes, Self.placeholder, at: start, ignoringCase: false) else { return nil }
        var end = start
        while end < bytes.count, !ends(bytes[end]) { end += 1 }
        return end > start ? (start, end) : nil
    }

    private static func hasPrefix(_ bytes: [UInt8], _ prefix: String, at start: Int, ignoringCase: Bool) -> Bool {
        var index = start
        for expected in prefix.utf8 {
            guard index < bytes.count else { return false }
            let byte = ignoringCase && (65...90).contains(bytes[index]) ? bytes[index] + 32 : bytes[index]
            guard byte == expected else { return false }
            index += 1
        }
        return true
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func endsName(_ byte: UInt8) -> Bool {
        isWhitespace(byte) || byte == UInt8(ascii: "&") || byte == UInt8(ascii: "#") || byte == UInt8(ascii: "?")
            || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")
    }

    private static func endsQueryValue(_ byte: UInt8) -> Bool {
        isWhitespace(byte) || byte == UInt8(ascii: "&") || byte == UInt8(ascii: "#") || byte == UInt8(ascii: ";")
            || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") || byte == UInt8(ascii: ">")
            || byte == UInt8(ascii: "`")
    }

    private static func endsAuthority(_ byte: UInt8) -> Bool {
        isWhitespace(byte) || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
    }
}
