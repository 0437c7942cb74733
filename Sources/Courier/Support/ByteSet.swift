/// A set of ASCII bytes as a 128-bit mask: membership is two shifts, with no hashing and no allocation.
///
/// Used on the per-request path (header validation, URL escaping), where `Set<UInt8>` hashing showed up
/// in profiles.
struct ByteSet: Sendable {
    private var low: UInt64 = 0
    private var high: UInt64 = 0

    /// ASCII letters.
    static let letters = ByteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
    /// Characters allowed in a URI scheme (RFC 3986 §3.1).
    static let schemeCharacters = letters.union("0123456789+-.")

    init(_ characters: String) {
        for byte in characters.utf8 where byte < 128 {
            if byte < 64 { low |= 1 << UInt64(byte) } else { high |= 1 << UInt64(byte - 64) }
        }
    }

    func contains(_ byte: UInt8) -> Bool {
        if byte < 64 { return low & (1 << UInt64(byte)) != 0 }
        if byte < 128 { return high & (1 << UInt64(byte - 64)) != 0 }
        return false
    }

    func union(_ other: String) -> ByteSet {
        var result = self
        let extra = ByteSet(other)
        result.low |= extra.low
        result.high |= extra.high
        return result
    }
}
