/// A parsed `Cache-Control` field (RFC 9111 §5.2), covering both request and response directives.
///
/// Parsing is lenient and single-pass (linear in the input, no backtracking), so arbitrary garbage from the network
/// can neither crash nor stall it. Malformed entries are skipped up to the next top-level comma. Whenever the input
/// is ambiguous the interpretation that caches *less* is chosen, because serving a stale or private response is a
/// worse failure than an extra revalidation:
/// - Directive names are case-insensitive (§5.2); both token and quoted-string arguments are accepted (§5.2).
/// - A directive that appears more than once with different values resolves to the most restrictive value:
///   the smallest `max-age`, `s-maxage`, `max-stale`, `stale-while-revalidate` and `stale-if-error`, the largest
///   `min-fresh`. (§4.2.1 makes conflicting duplicates invalid freshness information, which is to be treated as
///   stale; picking the smallest lifetime approximates that without discarding the header.)
/// - An invalid `max-age` or `s-maxage` argument (empty, negative, non-digits) is exposed as `0`, i.e. stale:
///   §4.2.1 says a cache SHOULD consider a response with invalid freshness information to be stale, and `0` makes
///   callers that just compare ages do that without a separate "invalid" flag. Other invalid delta-seconds
///   arguments are ignored (the directive is absent), which likewise grants no extra staleness.
/// - Arguments on argument-less directives (e.g. `no-store=1`) are ignored and the directive is honoured.
struct CacheControl: Sendable, Equatable {
    /// The argument of the `max-stale` request directive (RFC 9111 §5.2.1.2).
    enum MaxStale: Sendable, Equatable {
        /// `max-stale` without an argument: a stale response of any age is acceptable.
        case any
        /// `max-stale=N`: a response stale by at most `N` seconds is acceptable.
        case seconds(Int)
    }

    /// Value that too-large delta-seconds saturate to. RFC 9111 §1.2.2 says to use 2147483648 (2^31), which is one
    /// more than `Int32.max`; we follow the RFC text.
    static let maximumDeltaSeconds = 2_147_483_648

    /// `max-age` (§5.2.1.1, §5.2.2.1); `0` when the argument was invalid (see the type documentation).
    var maxAge: Int?
    /// `s-maxage` (§5.2.2.10); `0` when the argument was invalid.
    var sMaxAge: Int?
    /// `max-stale` (§5.2.1.2).
    var maxStale: MaxStale?
    /// `min-fresh` (§5.2.1.3).
    var minFresh: Int?
    /// `no-cache` in either form (§5.2.1.4, §5.2.2.4).
    var noCache = false
    /// `no-store` (§5.2.1.5, §5.2.2.5).
    var noStore = false
    /// `no-transform` (§5.2.1.6, §5.2.2.6).
    var noTransform = false
    /// `only-if-cached` (§5.2.1.7).
    var onlyIfCached = false
    /// `must-revalidate` (§5.2.2.2).
    var mustRevalidate = false
    /// `proxy-revalidate` (§5.2.2.8).
    var proxyRevalidate = false
    /// `must-understand` (§5.2.2.3).
    var mustUnderstand = false
    /// `private` in either form (§5.2.2.7); a private client cache may still store the response.
    var isPrivate = false
    /// `public` (§5.2.2.9).
    var isPublic = false
    /// `immutable` (RFC 8246).
    var immutable = false
    /// `stale-while-revalidate` (RFC 5861 §3).
    var staleWhileRevalidate: Int?
    /// `stale-if-error` (RFC 5861 §4).
    var staleIfError: Int?
    /// The qualified `no-cache` names and the unknown directives, which nearly every field lacks: `nil` then, so that
    /// a copy or the end of a `CacheControl` touches no reference count. As two collections stored inline they cost
    /// four retains and releases of the empty singletons for each of the three values a cached call builds.
    private var rare: Rare?

    /// What ``rare`` holds once a field has either.
    private struct Rare: Sendable, Equatable {
        var noCacheFields: [String] = []
        var extensions: [String: String?] = [:]
    }

    /// No directives: what a message without `Cache-Control` has. Kept apart from the initializer below, which would
    /// build and drop its defaulted collections on every call.
    init() {}

    /// Creates directives; every argument defaults to the directive's absence.
    init(
        maxAge: Int? = nil, sMaxAge: Int? = nil, maxStale: MaxStale? = nil, minFresh: Int? = nil, noCache: Bool = false,
        noCacheFields: [String]? = nil, noStore: Bool = false, noTransform: Bool = false, onlyIfCached: Bool = false,
        mustRevalidate: Bool = false, proxyRevalidate: Bool = false, mustUnderstand: Bool = false,
        isPrivate: Bool = false, isPublic: Bool = false, immutable: Bool = false, staleWhileRevalidate: Int? = nil,
        staleIfError: Int? = nil, extensions: [String: String?]? = nil
    ) {
        self.maxAge = maxAge
        self.sMaxAge = sMaxAge
        self.maxStale = maxStale
        self.minFresh = minFresh
        self.noCache = noCache
        self.noStore = noStore
        self.noTransform = noTransform
        self.onlyIfCached = onlyIfCached
        self.mustRevalidate = mustRevalidate
        self.proxyRevalidate = proxyRevalidate
        self.mustUnderstand = mustUnderstand
        self.isPrivate = isPrivate
        self.isPublic = isPublic
        self.immutable = immutable
        self.staleWhileRevalidate = staleWhileRevalidate
        self.staleIfError = staleIfError
        if let noCacheFields { self.noCacheFields = noCacheFields }
        if let extensions { self.extensions = extensions }
    }

    /// Lowercased field names from the qualified form `no-cache="Set-Cookie"` (§5.2.2.4). Empty whenever an
    /// unqualified `no-cache` is present, because that is the more restrictive reading and wins.
    var noCacheFields: [String] {
        get { rare?.noCacheFields ?? [] }
        set { changeRare { $0.noCacheFields = newValue } }
    }

    /// Unrecognised directives keyed by lowercased name; the value is the unquoted argument or `nil` if there was
    /// none. The first occurrence of a name wins, since unknown directives have no "restrictive" ordering.
    var extensions: [String: String?] {
        get { rare?.extensions ?? [:] }
        set { changeRare { $0.extensions = newValue } }
    }

    /// Changes ``rare`` in place, and leaves it `nil` when both collections end up empty, so that equal directives
    /// compare equal however they were built.
    private mutating func changeRare(_ change: (inout Rare) -> Void) {
        var changed = rare ?? Rare()
        rare = nil
        change(&changed)
        rare = changed.noCacheFields.isEmpty && changed.extensions.isEmpty ? nil : changed
    }
}

extension CacheControl {
    /// Parses one field value, which may be several field lines already joined with `", "` (RFC 9110 §5.3).
    /// - Parameter value: The field value; never fails, unparseable parts are ignored.
    init(parsing value: some StringProtocol) {
        var string = String(value)
        string.withUTF8 { apply(directivesIn: $0) }
    }

    /// The directives of every `Cache-Control` field of `headers`, read in place: collecting the values into an array
    /// first cost an allocation and about 600 instructions on every response the cache looks at.
    static func parse(cacheControlOf headers: HeaderFields) -> CacheControl {
        var result = CacheControl()
        for index in headers.fields.indices where headers.fields[index].hasName("cache-control") {
            result.apply(fieldValue: headers.fields[index].value)
        }
        return result
    }

    /// Applies one field value's directives. (A method, so that the closure that reads the bytes captures `self` in
    /// place: a closure in a static function copied the whole value in and out.)
    private mutating func apply(fieldValue: String) {
        var value = fieldValue
        value.withUTF8 { apply(directivesIn: $0) }
    }

    /// Parses every `Cache-Control` field line of a message and merges them with the duplicate rules above.
    ///
    /// Equivalent to parsing the lines joined by `", "`, except that an unterminated quoted-string cannot swallow
    /// the following lines.
    /// - Parameter values: The field lines, in order.
    /// - Returns: The combined directives.
    static func parse(_ values: [String]) -> CacheControl {
        var result = CacheControl()
        for value in values { result.apply(fieldValue: value) }
        return result
    }

    /// Location of a directive argument within the input.
    private struct Argument {
        /// Byte range of the token, or of the quoted-string contents without the quotes.
        var range: Range<Int>
        /// Whether the contents contain quoted-pairs (`\x`) that must be unescaped.
        var hasEscapes: Bool
    }

    /// Directives with defined semantics.
    private enum Directive {
        case maxAge, sMaxAge, maxStale, minFresh, noCache, noStore, noTransform, onlyIfCached, mustRevalidate
        case proxyRevalidate, mustUnderstand, isPrivate, isPublic, immutable, staleWhileRevalidate, staleIfError
    }

    /// The known directive with this wire name, matched case-insensitively without allocating.
    ///
    /// Candidates are picked by length first, so a name is compared with at most three of them; the `static let` table
    /// this replaces was read through `swift_once` on every parse (see ``ByteSet``) and scanned in order.
    private static func directive(named name: UnsafeBufferPointer<UInt8>) -> Directive? {
        func named(_ literal: StaticString, _ directive: Directive) -> Directive? {
            equalsIgnoringCase(name, literal) ? directive : nil
        }
        switch name.count {
        case 6: return named("public", .isPublic)
        case 7: return named("max-age", .maxAge) ?? named("private", .isPrivate)
        case 8: return named("s-maxage", .sMaxAge) ?? named("no-cache", .noCache) ?? named("no-store", .noStore)
        case 9: return named("max-stale", .maxStale) ?? named("min-fresh", .minFresh) ?? named("immutable", .immutable)
        case 12: return named("no-transform", .noTransform)
        case 14: return named("only-if-cached", .onlyIfCached) ?? named("stale-if-error", .staleIfError)
        case 15: return named("must-revalidate", .mustRevalidate) ?? named("must-understand", .mustUnderstand)
        case 16: return named("proxy-revalidate", .proxyRevalidate)
        case 22: return named("stale-while-revalidate", .staleWhileRevalidate)
        default: return nil
        }
    }

    /// Single forward pass over `#cache-directive` (RFC 9111 §5.2, RFC 9110 §5.6.1): every byte is examined a
    /// bounded number of times, so the cost is linear whatever the input.
    private mutating func apply(directivesIn bytes: UnsafeBufferPointer<UInt8>) {
        let comma = UInt8(ascii: ","), quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        var index = 0
        /// Skips OWS (SP / HTAB, RFC 9110 §5.6.3).
        func skipWhitespace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
        }
        while index < bytes.count {
            while index < bytes.count, bytes[index] == comma || bytes[index] == 0x20 || bytes[index] == 0x09 {
                index += 1
            }
            guard index < bytes.count else { return }
            let nameStart = index
            while index < bytes.count, Self.isTokenByte(bytes[index]) { index += 1 }
            let name = UnsafeBufferPointer(rebasing: bytes[nameStart..<index])
            var argument: Argument?
            var isWellFormed = !name.isEmpty
            skipWhitespace()  // BWS around "=" is not in the grammar, but tolerating it costs nothing.
            if isWellFormed, index < bytes.count, bytes[index] == UInt8(ascii: "=") {
                index += 1
                skipWhitespace()
                if index < bytes.count, bytes[index] == quote {
                    index += 1
                    let start = index
                    var hasEscapes = false
                    while index < bytes.count, bytes[index] != quote {
                        if bytes[index] == backslash { hasEscapes = true; index += 1 }
                        index += 1
                    }
                    isWellFormed = index < bytes.count  // An unterminated quoted-string is malformed.
                    argument = Argument(range: start..<min(index, bytes.count), hasEscapes: hasEscapes)
                    index = min(index + 1, bytes.count)
                } else {
                    let start = index
                    while index < bytes.count, Self.isTokenByte(bytes[index]) { index += 1 }
                    argument = Argument(range: start..<index, hasEscapes: false)
                }
                skipWhitespace()
            }
            if index < bytes.count, bytes[index] != comma {
                // Garbage after the directive: skip to the next comma that is not inside a quoted-string.
                isWellFormed = false
                while index < bytes.count, bytes[index] != comma {
                    if bytes[index] == quote {
                        index += 1
                        while index < bytes.count, bytes[index] != quote { index += bytes[index] == backslash ? 2 : 1 }
                    }
                    index += 1
                }
            }
            guard !name.isEmpty else { continue }
            if let argument, argument.hasEscapes {
                let unescaped = Self.unescape(UnsafeBufferPointer(rebasing: bytes[argument.range]))
                unescaped.withUnsafeBufferPointer { apply(name: name, argument: $0, isWellFormed: isWellFormed) }
            } else {
                let raw = argument.map { UnsafeBufferPointer(rebasing: bytes[$0.range]) }
                apply(name: name, argument: raw, isWellFormed: isWellFormed)
            }
        }
    }

    /// Records one directive. `argument` is the unquoted argument bytes, `nil` when there was no `=`.
    private mutating func apply(
        name: UnsafeBufferPointer<UInt8>, argument: UnsafeBufferPointer<UInt8>?, isWellFormed: Bool
    ) {
        guard let known = Self.directive(named: name) else {
            let key = String(decoding: name.map(ASCII.lowercased), as: UTF8.self)
            if isWellFormed, extensions.index(forKey: key) == nil {
                let value = argument.map { String(decoding: $0, as: UTF8.self) }
                changeRare { $0.extensions[key] = .some(value) }
            }
            return
        }
        let seconds = isWellFormed ? argument.flatMap(Self.deltaSeconds) : nil
        switch known {
        case .noStore: noStore = true
        case .noTransform: noTransform = true
        case .onlyIfCached: onlyIfCached = true
        case .mustRevalidate: mustRevalidate = true
        case .proxyRevalidate: proxyRevalidate = true
        case .mustUnderstand: mustUnderstand = true
        case .isPrivate: isPrivate = true
        case .isPublic: isPublic = true
        case .immutable: immutable = true
        case .maxAge: maxAge = min(maxAge ?? .max, seconds ?? 0)
        case .sMaxAge: sMaxAge = min(sMaxAge ?? .max, seconds ?? 0)
        case .minFresh: if let seconds { minFresh = max(minFresh ?? 0, seconds) }
        case .staleWhileRevalidate: if let seconds { staleWhileRevalidate = min(staleWhileRevalidate ?? .max, seconds) }
        case .staleIfError: if let seconds { staleIfError = min(staleIfError ?? .max, seconds) }
        case .maxStale:
            if isWellFormed, argument == nil {
                if maxStale == nil { maxStale = .any }
            } else if let seconds {
                if case .seconds(let current) = maxStale, current <= seconds { return }
                maxStale = .seconds(seconds)
            }
        case .noCache:
            let fields = isWellFormed ? argument.map(Self.fieldNames) ?? [] : []
            if fields.isEmpty {
                noCacheFields = []
            } else if !noCache || !noCacheFields.isEmpty {
                changeRare { rare in rare.noCacheFields += fields.filter { !rare.noCacheFields.contains($0) } }
            }
            noCache = true
        }
    }

    /// Quoted-string contents with quoted-pairs (`\x` → `x`) resolved (RFC 9110 §5.6.4).
    private static func unescape(_ raw: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(raw.count)
        var escaped = false
        for byte in raw {
            if !escaped, byte == UInt8(ascii: "\\") {
                escaped = true
            } else {
                result.append(byte)
                escaped = false
            }
        }
        return result
    }

    /// Parses delta-seconds (RFC 9111 §1.2.2): one or more digits, saturating at `maximumDeltaSeconds`.
    /// Returns `nil` for anything else, including an empty argument or a sign.
    private static func deltaSeconds(_ argument: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !argument.isEmpty else { return nil }
        var value = 0
        for byte in argument {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = min(value * 10 + Int(digit), maximumDeltaSeconds)
        }
        return value
    }

    /// Splits a qualified `no-cache` list into distinct lowercased field names; fragments that are not tokens are
    /// dropped, and an empty result makes the directive unqualified (the restrictive reading).
    private static func fieldNames(_ argument: UnsafeBufferPointer<UInt8>) -> [String] {
        var names: [String] = []
        for fragment in argument.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true) {
            let trimmed = fragment.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }
            guard !trimmed.isEmpty, trimmed.allSatisfy(isTokenByte) else { continue }
            let name = String(decoding: trimmed.reversed().map(ASCII.lowercased), as: UTF8.self)
            if !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// `tchar` from RFC 9110 §5.6.2.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        ByteSet.tokenCharacters.contains(byte)
    }

    /// Case-insensitive comparison of a directive name with a lowercase ASCII literal.
    private static func equalsIgnoringCase(_ name: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        // An index loop that stops at the first difference: candidates of one length mostly differ in their first
        // bytes, and `zip(...).allSatisfy` cost about 60 instructions a candidate.
        guard literal.utf8CodeUnitCount == name.count else { return false }
        let expected = literal.utf8Start
        for index in 0..<name.count where ASCII.lowercased(name[index]) != expected[index] { return false }
        return true
    }
}
