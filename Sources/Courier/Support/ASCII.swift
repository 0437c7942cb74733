/// ASCII case folding for protocol text (field names, directives, schemes), which RFC 9110 compares ignoring case.
enum ASCII {
    /// `byte` lower-cased when it is `A`–`Z`; every other byte unchanged (a plain `| 0x20` would corrupt tchars
    /// such as `^`).
    static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}

extension String.UTF8View {
    /// Whether `needle` (lowercase ASCII) occurs in this text, ignoring ASCII case; allocates nothing.
    func containsIgnoringASCIICase(_ needle: String.UTF8View) -> Bool {
        guard !needle.isEmpty else { return true }
        // Over the bytes of copies (a copy of a string is a retain): `withUTF8` lends a small string's bytes too (up
        // to 15, as most directives and short field values have), where `withContiguousStorageIfAvailable` declined
        // and stepping through the views' indices cost about 40 instructions a byte.
        var haystack = String(self)
        var needle = String(needle)
        return haystack.withUTF8 { haystack in needle.withUTF8 { Self.search(haystack, for: $0) } }
    }

    /// Whether `haystack` contains `needle` (lower-case), ignoring the ASCII case of `haystack`.
    private static func search(_ haystack: UnsafeBufferPointer<UInt8>, for needle: UnsafeBufferPointer<UInt8>) -> Bool {
        guard needle.count <= haystack.count else { return false }
        for start in 0...(haystack.count - needle.count) {
            var matched = 0
            while matched < needle.count, ASCII.lowercased(haystack[start + matched]) == needle[matched] {
                matched += 1
            }
            if matched == needle.count { return true }
        }
        return false
    }
}
