extension HeaderFields.Field {
    /// `name` in lower case, as ``canonicalName`` keeps it: a well-known name, in whatever case it came, is recognized
    /// without lower-casing it, and its canonical form is the literal (no new string, and nothing to retain).
    ///
    /// Every field of every response is built here. HTTP/1 servers send names in mixed case (`Content-Length`), and
    /// `String.lowercased()` took about 184 instructions for such a name; recognizing one of the eight fields nginx
    /// sends takes about 65 (`Docs/Benchmarks.md`, session 19). Any other name is lower-cased as before.
    @inline(__always)
    static func canonical(_ name: String) -> String {
        wellKnown(name) ?? name.lowercased()
    }

    /// The lower-case literal of a well-known field name spelled as `name` in any ASCII case, or `nil`.
    @inline(never)
    private static func wellKnown(_ name: String) -> String? {
        let known = name.utf8.withContiguousStorageIfAvailable { name -> String? in
            // Told apart by length, then by first letter, then compared with one literal.
            guard let first = name.first else { return nil }
            switch (name.count, first | 0x20) {
            case (3, UInt8(ascii: "a")): return spelled(name, "age") ? "age" : nil
            case (4, UInt8(ascii: "d")): return spelled(name, "date") ? "date" : nil
            case (4, UInt8(ascii: "e")): return spelled(name, "etag") ? "etag" : nil
            case (4, UInt8(ascii: "h")): return spelled(name, "host") ? "host" : nil
            case (4, UInt8(ascii: "v")): return spelled(name, "vary") ? "vary" : nil
            case (6, UInt8(ascii: "a")): return spelled(name, "accept") ? "accept" : nil
            case (6, UInt8(ascii: "s")): return spelled(name, "server") ? "server" : nil
            case (7, UInt8(ascii: "e")): return spelled(name, "expires") ? "expires" : nil
            case (8, UInt8(ascii: "l")): return spelled(name, "location") ? "location" : nil
            case (10, UInt8(ascii: "c")): return spelled(name, "connection") ? "connection" : nil
            case (10, UInt8(ascii: "k")): return spelled(name, "keep-alive") ? "keep-alive" : nil
            case (10, UInt8(ascii: "s")): return spelled(name, "set-cookie") ? "set-cookie" : nil
            case (10, UInt8(ascii: "u")): return spelled(name, "user-agent") ? "user-agent" : nil
            case (12, UInt8(ascii: "c")): return spelled(name, "content-type") ? "content-type" : nil
            case (13, UInt8(ascii: "a")):
                if spelled(name, "accept-ranges") { return "accept-ranges" }
                return spelled(name, "authorization") ? "authorization" : nil
            case (13, UInt8(ascii: "c")):
                if spelled(name, "cache-control") { return "cache-control" }
                return spelled(name, "content-range") ? "content-range" : nil
            case (13, UInt8(ascii: "i")): return spelled(name, "if-none-match") ? "if-none-match" : nil
            case (13, UInt8(ascii: "l")): return spelled(name, "last-modified") ? "last-modified" : nil
            case (14, UInt8(ascii: "c")): return spelled(name, "content-length") ? "content-length" : nil
            case (15, UInt8(ascii: "a")): return spelled(name, "accept-encoding") ? "accept-encoding" : nil
            case (16, UInt8(ascii: "c")): return spelled(name, "content-encoding") ? "content-encoding" : nil
            case (17, UInt8(ascii: "i")): return spelled(name, "if-modified-since") ? "if-modified-since" : nil
            case (17, UInt8(ascii: "t")): return spelled(name, "transfer-encoding") ? "transfer-encoding" : nil
            default: return nil
            }
        }
        return known ?? nil
    }

    /// Whether `name` is `literal` (lower-case letters and `-`, as long as `name`, at least 3 bytes) in any ASCII case.
    ///
    /// Compared a word at a time: the literal's letters have bit 0x40 set, so `(literal & 0x40…) >> 1` sets bit 0x20
    /// (the case bit) at exactly the letters' places. A given byte folded there matches only the letter in either
    /// case, and any other byte must match exactly (a `-` is not a carriage return with its case bit set).
    @inline(__always)
    private static func spelled(_ name: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        let given = UnsafeRawPointer(name.baseAddress.unsafelyUnwrapped)
        let expected = UnsafeRawPointer(literal.utf8Start)
        let count = name.count
        if count >= 8 {
            // Whole words from the start, then the last word, which may overlap the one before it.
            var offset = 0
            while offset < count - 8 {
                guard
                    folds(
                        given.loadUnaligned(fromByteOffset: offset, as: UInt64.self),
                        to: expected.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                else { return false }
                offset += 8
            }
            return folds(
                given.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self),
                to: expected.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
        }
        if count >= 4 {
            let last = count - 4
            return folds(
                UInt64(given.loadUnaligned(as: UInt32.self)), to: UInt64(expected.loadUnaligned(as: UInt32.self)))
                && folds(
                    UInt64(given.loadUnaligned(fromByteOffset: last, as: UInt32.self)),
                    to: UInt64(expected.loadUnaligned(fromByteOffset: last, as: UInt32.self)))
        }
        for index in 0..<count {
            let byte = name[index]
            let folded = byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
            guard folded == expected.load(fromByteOffset: index, as: UInt8.self) else { return false }
        }
        return true
    }

    /// Whether the bytes of `given` are those of `expected` with the letters' case ignored.
    @inline(__always)
    private static func folds(_ given: UInt64, to expected: UInt64) -> Bool {
        given | (expected & 0x4040_4040_4040_4040) >> 1 == expected
    }
}
