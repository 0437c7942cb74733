import Foundation

extension Redaction {
    /// What a description may show of a request body: the text with its credentials redacted, or `nil` when the
    /// body cannot be shown safely (it is not text, or it claims to be JSON and does not parse, so its secrets
    /// cannot be found by name).
    ///
    /// Credentials in a body are found by the same names as everywhere else: a form field or a JSON member named like
    /// one of the policy's query parameters or header fields (`password`, `refresh_token`, `authorization`). A body is
    /// read as JSON when its type says so or when it starts with `{` or `[`, whatever its type says.
    func redactBody(_ body: Data, contentType: String?) -> String? {
        guard let text = String(data: body, encoding: .utf8),
            !text.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\n" && $0 != "\r" && $0 != "\t" })
        else { return nil }
        let mediaType = (contentType ?? "").split(separator: ";").first.map {
            String(decoding: $0.utf8.map(ASCII.lowercased), as: UTF8.self).trimmingCharacters(in: .whitespaces)
        }
        switch mediaType {
        case "application/x-www-form-urlencoded":
            // A form is a query without its `?`: redact it as one, then drop the `?` again.
            return String(redact("?" + text).dropFirst())
        case let type? where type == "application/json" || type.hasSuffix("+json"):
            return redactJSON(text)
        default:
            // A JSON body sent with another type (or none) still has its members named like credentials: sniffed by
            // its first character, and left out when it does not parse, as a body typed JSON is.
            let first = text.utf8.first { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
            if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") { return redactJSON(text) }
            return redact(text)
        }
    }

    /// `text` unchanged when no member is a credential; otherwise re-encoded with those members' values replaced.
    private func redactJSON(_ text: String) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
        else { return nil }
        var changed = false
        let redacted = redactMembers(of: object, changed: &changed)
        guard changed else { return redact(text) }
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: redacted, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
        else { return nil }
        return redact(String(decoding: data, as: UTF8.self))
    }

    private func redactMembers(of value: Any, changed: inout Bool) -> Any {
        if let object = value as? [String: Any] {
            var result: [String: Any] = [:]
            for (name, member) in object {
                let lowered = name.lowercased()
                if queryParameters.contains(lowered) || headerNames.contains(lowered) {
                    result[name] = Self.placeholder
                    changed = true
                } else {
                    result[name] = redactMembers(of: member, changed: &changed)
                }
            }
            return result
        }
        if let array = value as? [Any] { return array.map { redactMembers(of: $0, changed: &changed) } }
        return value
    }
}
