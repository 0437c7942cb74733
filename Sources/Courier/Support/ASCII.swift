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
        var start = startIndex
        while start != endIndex {
            var candidate = start
            var expected = needle.startIndex
            while candidate != endIndex, expected != needle.endIndex,
                ASCII.lowercased(self[candidate]) == needle[expected]
            {
                formIndex(after: &candidate)
                needle.formIndex(after: &expected)
            }
            if expected == needle.endIndex { return true }
            formIndex(after: &start)
        }
        return false
    }
}
