/// A set of ASCII bytes as a 128-bit mask: membership is two shifts, with no hashing and no allocation.
///
/// Used on the per-request path (header validation, URL escaping), where `Set<UInt8>` hashing showed up
/// in profiles.
///
/// The sets the request path uses are computed properties returning constant masks, not `static let`s built from
/// their characters: a global that needs initializing is read through `swift_once`, which on Linux goes through
/// libstdc++'s `std::call_once` and its thread-local bookkeeping on every read (about 40 instructions), and a call read
/// four (cache off) to eighteen (a stored miss) such globals. `ByteSetTests` checks each mask against the characters
/// it stands for.
struct ByteSet: Sendable, Equatable {
    private var low: UInt64 = 0
    private var high: UInt64 = 0

    /// ASCII letters.
    static var letters: ByteSet { ByteSet(low: 0x0000_0000_0000_0000, high: 0x07ff_fffe_07ff_fffe) }
    /// Characters allowed in a URI scheme (RFC 3986 §3.1): letters, digits, `+`, `-` and `.`.
    static var schemeCharacters: ByteSet { ByteSet(low: 0x03ff_6800_0000_0000, high: 0x07ff_fffe_07ff_fffe) }
    /// `tchar` (RFC 9110 §5.6.2): ``letters``, digits, the grave accent and `!#$%&'*+-.^_|~`.
    static var tokenCharacters: ByteSet { ByteSet(low: 0x03ff_6cfa_0000_0000, high: 0x57ff_ffff_c7ff_fffe) }
    /// Characters RFC 3986 §2.3 leaves unreserved: ``letters``, digits, `-`, `.`, `_` and `~`.
    static var unreserved: ByteSet { ByteSet(low: 0x03ff_6000_0000_0000, high: 0x47ff_fffe_87ff_fffe) }
    /// Characters a path or query may carry as they are: ``unreserved``, sub-delims (`!$&'()*+,;=`), `:`, `@`, `/`
    /// and `?` (RFC 3986 §3.3, §3.4), plus `%`, which the caller checks starts a valid escape.
    static var urlTarget: ByteSet { ByteSet(low: 0xafff_fff2_0000_0000, high: 0x47ff_fffe_87ff_ffff) }

    /// `bchars` (RFC 2046 §5.1.1), the characters of a multipart boundary: ``letters``, digits, space and
    /// `'()+_,-./:=?`. Off the request path, so built from its characters.
    static let boundaryCharacters = ByteSet("'()+_,-./:=? 0123456789").union(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")

    init(low: UInt64, high: UInt64) {
        self.low = low
        self.high = high
    }

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
