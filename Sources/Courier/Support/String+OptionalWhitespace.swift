extension StringProtocol {
    /// The text without the optional whitespace (RFC 9110 §5.6.3: spaces and horizontal tabs) at either end.
    ///
    /// Header values are trimmed on every stored response; Foundation's `trimmingCharacters(in: .whitespaces)` goes
    /// through `CharacterSet` and cost more than parsing the fields it trimmed. Only SP and HTAB are optional
    /// whitespace in a field value, so this looks at bytes.
    var trimmingOptionalWhitespace: String {
        let bytes = utf8
        var start = bytes.startIndex
        while start < bytes.endIndex, Self.isOptionalWhitespace(bytes[start]) { start = bytes.index(after: start) }
        // UTF8View of a StringProtocol is only a forward collection: the end is one past the last other byte.
        var end = start
        var index = start
        while index < bytes.endIndex {
            let next = bytes.index(after: index)
            if !Self.isOptionalWhitespace(bytes[index]) { end = next }
            index = next
        }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    private static func isOptionalWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }
}

extension String {
    /// ``StringProtocol/trimmingOptionalWhitespace`` returning the string itself, uncopied, when neither end is
    /// optional whitespace: the usual case, where walking the forward-only view to find its end cost about 1,000
    /// instructions for an entity tag.
    var trimmingOptionalWhitespace: String {
        let bytes = utf8
        guard let first = bytes.first, let last = bytes.last,
            first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") || last == UInt8(ascii: " ")
                || last == UInt8(ascii: "\t")
        else { return self }
        return self[...].trimmingOptionalWhitespace
    }
}
