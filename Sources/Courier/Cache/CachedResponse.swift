import Foundation

/// A response held by a ``ResponseCache``, with everything needed to judge its age and freshness.
///
/// All header parsing happens once, when the entry is made (outside the cache actor): the `Cache-Control`
/// directives, `Date`, `Expires`, `Last-Modified`, `Age`, `ETag` and `Vary`. Lookups only compare numbers.
///
/// ```swift
/// if let entry = await cache.cachedResponse(for: request, partition: nil) {
///     print(entry.age(at: Date()), entry.freshnessLifetime, entry.isFresh(at: Date()))
/// }
/// ```
public struct CachedResponse: Sendable {
    /// The stored response: status, header fields (hop-by-hop fields removed, RFC 9111 §3.1, and `Set-Cookie`, which
    /// belongs to the caller who received it) and body.
    public internal(set) var response: TransportResponse {
        get { stored.fields.response }
        set {
            var fields = stored.fields
            fields.response = newValue
            stored = Stored(fields)
            // A derived answer (a range served from this entry) is not what the cache stores: nothing made from it
            // may be kept beside the stored entry, and nothing kept there may answer for it.
            storageSlot = nil
            decoded = nil
            lastServed = nil
        }
    }
    /// When the request that produced (or last revalidated) this response was sent (`request_time`, §4.2.3).
    public var requestTime: Date { stored.fields.requestTime }
    /// When that response was received (`response_time`, §4.2.3).
    public var responseTime: Date { stored.fields.responseTime }
    /// How long the response stays fresh after it was generated, in seconds (RFC 9111 §4.2.1): `max-age`, else
    /// `Expires` − `Date`, else the caller's default freshness where it applies, else the heuristic 10% of `Date` −
    /// `Last-Modified` (§4.2.2), else `0`.
    public var freshnessLifetime: TimeInterval { stored.fields.freshnessLifetime }
    /// Whether ``freshnessLifetime`` is a heuristic (§4.2.2) rather than what the server said.
    public var isHeuristic: Bool { stored.fields.isHeuristic }
    /// The `ETag` of the stored response, used for `If-None-Match` (§4.3.1).
    public var etag: String? { stored.fields.etag }
    /// The `Last-Modified` value, when it is a valid HTTP date; used for `If-Modified-Since` (§4.3.1).
    public var lastModified: String? { stored.fields.lastModified }
    /// The bytes this entry counts against ``ResponseCache/maxBytes``: the UTF-8 length of every stored header
    /// name and value plus the body length, `Σ (name.utf8.count + value.utf8.count) + body.count`.
    public var byteCount: Int { stored.fields.byteCount }

    /// The part of the representation a stored `206` holds (RFC 9111 §3.3); `nil` for a complete response, and for
    /// a `206` whose `Content-Range` is missing or malformed (never stored).
    var contentRange: ContentRange? { stored.fields.contentRange }

    /// The lifetime the caller chose for responses that name none, in seconds; kept so that a `304` merge and a
    /// later process apply it again.
    var defaultFreshness: TimeInterval? { stored.fields.defaultFreshness }

    /// Which stored entry this is: set when a ``ResponseCache`` returns it, renewed by every store and merge, `0` for
    /// an entry no cache returned. A `304` merges only into the generation its conditional request was built from.
    var generation: UInt64 = 0
    /// Where a ``ResponseCache`` holds this entry (set with ``generation``): a decoded value is kept beside it there.
    var storageSlot: Int?
    /// The body as a caller decoded it, kept beside a stored entry so that a fresh hit of the same type and decoder
    /// skips decoding; `nil` until someone decoded it (see ``ResponseCache/keepDecoded(_:beside:)``).
    var decoded: DecodedValue?
    /// The response as a ``ResponseCache`` last served it, kept beside the stored entry; see ``Served``.
    var lastServed: Served?

    /// The stored response with its `Age` field, as served at one whole-second age. Hits within the same second
    /// serve the same value: building it copies the header fields and formats the age, about a tenth of a hit.
    struct Served: Sendable {
        let age: Int
        let response: TransportResponse
    }

    /// The parsed `Cache-Control` of the response.
    var directives: CacheControl { stored.fields.directives }
    /// `corrected_initial_age` (§4.2.3), fixed when the response was received.
    var correctedInitialAge: TimeInterval { stored.fields.correctedInitialAge }
    /// Lowercased names from `Vary` (§4.1), and the request's values for them when the response was stored.
    var varyNames: [String] { stored.fields.varyNames }
    var varyValues: [String?] { stored.fields.varyValues }
    /// `Vary: *` (§4.1), or a `Vary` longer than ``maxVaryNames``: the response matches no later request and is
    /// never stored.
    var variesOnEverything: Bool { stored.fields.variesOnEverything }

    /// What the entry holds, parsed once, behind one reference: a lookup copies the entry out of storage and through
    /// the plan, and as a plain struct of fifteen fields each copy moved and retained all of them.
    private var stored: Stored

    struct Fields: Sendable {
        var response: TransportResponse
        var requestTime: Date
        var responseTime: Date
        var freshnessLifetime: TimeInterval
        var isHeuristic: Bool
        var etag: String?
        var lastModified: String?
        var byteCount: Int
        var contentRange: ContentRange?
        var defaultFreshness: TimeInterval?
        var directives: CacheControl
        var correctedInitialAge: TimeInterval
        var varyNames: [String]
        var varyValues: [String?]
        var variesOnEverything: Bool
    }

    /// The parsed fields, immutable: an entry that changes one (a range served from it) gets a new box.
    final class Stored: Sendable {
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    /// The most `Vary` names a stored response may list. A server controls `Vary`, and each name costs a header
    /// lookup on every hit of that URL: a 7 kB `Vary` of 1,000 names made every hit 28–38× slower. Real responses
    /// vary on a handful of fields; a longer list is treated like `Vary: *` (not stored).
    static let maxVaryNames = 32

    // The field lists below match canonical (lower-case) names by their length first, then against the one or two
    // names of that length: every stored response asks about each of its fields, and most fields have a length no
    // listed name has. (A `switch` over the string literals compared the name with each literal in turn, about 300
    // instructions a field; a `static let` set hashes the name and is read through `swift_once`, see `ByteSet`.)

    /// Whether a cache does not store or forward this field: it is hop-by-hop (RFC 9110 §7.6.1, RFC 9111 §3.1).
    static func isHopByHop(_ name: String) -> Bool {
        switch name.utf8.count {
        case 2: name == "te"
        case 7: name == "upgrade" || name == "trailer"
        case 10: name == "connection" || name == "keep-alive"
        case 16: name == "proxy-connection"
        case 17: name == "transfer-encoding"
        default: false
        }
    }

    /// Whether this field is removed before a response is stored: hop-by-hop; a field that hands a credential to
    /// the one caller who received it (RFC 6265 §3: a cookie is set for that user agent's session), so a stored
    /// response never replays it to another caller; or a field between a client and a proxy (RFC 9111 §3.1), which
    /// concerns the connection through a proxy, not the resource.
    static func isNeverStored(_ name: String) -> Bool {
        let isPerRecipient =
            switch name.utf8.count {
            case 10: name == "set-cookie"
            case 11: name == "set-cookie2"
            case 18: name == "proxy-authenticate"
            case 19: name == "proxy-authorization"
            case 25: name == "proxy-authentication-info"
            default: false
            }
        return isPerRecipient || isHopByHop(name)
    }

    /// Whether `other` holds the same stored response as this entry, received at the same time: the same entry,
    /// read back from the disk tier. Compares bodies: for the unusual path of a `304` that finds its entry on disk.
    func isSameStoredResponse(as other: CachedResponse) -> Bool {
        responseTime == other.responseTime && requestTime == other.requestTime && response == other.response
    }

    /// Whether a `304` never replaces this stored field (§3.2): framing and content coding describe the stored body.
    static func isKeptOnUpdate(_ name: String) -> Bool {
        let describesTheBody =
            switch name.utf8.count {
            case 13: name == "content-range"
            case 14: name == "content-length"
            case 16: name == "content-encoding"
            default: false
            }
        return describesTheBody || isHopByHop(name)
    }

    /// Parses `response` as it would be stored for `request`.
    ///
    /// - Parameters:
    ///   - response: The response as received.
    ///   - request: The request it answers; supplies the values of the headers named by `Vary`.
    ///   - requestTime: When the request was sent.
    ///   - responseTime: When the response was received.
    public init(response: TransportResponse, request: TransportRequest, requestTime: Date, responseTime: Date) {
        self.init(
            response: response, request: request, requestTime: requestTime, responseTime: responseTime,
            defaultFreshness: nil)
    }

    /// Parses `response`, with the lifetime the caller chose for a response that names none (see
    /// ``APIClient/Configuration/defaultFreshness``): it applies only where a heuristic could (§4.2.2) and never
    /// to `no-cache` or `must-revalidate`, and it takes the heuristic's place.
    init(
        response: TransportResponse, request: TransportRequest, requestTime: Date, responseTime: Date,
        defaultFreshness: TimeInterval?
    ) {
        let headers = Self.storedHeaders(response.headers, credentials: request.credentials)
        let stored = TransportResponse(statusCode: response.statusCode, headers: headers, body: response.body)
        let fields = StoredFields(headers)
        let directives = CacheControl.parse(fields.cacheControl)
        let date = fields.date.flatMap { HTTPDate.parse($0, now: responseTime) }
        let dateValue = date ?? responseTime  // RFC 9110 §6.6.1: a recipient with a clock supplies the Date.
        let lastModifiedDate = fields.lastModified.flatMap { HTTPDate.parse($0, now: responseTime) }
        // §4.2.1: an invalid Expires (such as "0") is a time in the past.
        let expires = fields.expires.map { HTTPDate.parse($0, now: responseTime) ?? .distantPast }
        let lifetime = Freshness.lifetime(
            directives: directives, expires: expires, date: dateValue, lastModified: lastModifiedDate,
            statusCode: response.statusCode, defaultFreshness: defaultFreshness)
        let correctedInitialAge = Freshness.correctedInitialAge(
            ageValue: Freshness.ageValue(fields.age), date: dateValue, requestTime: requestTime,
            responseTime: responseTime)
        let etag = fields.etag.map(\.trimmingOptionalWhitespace).flatMap { $0.isEmpty ? nil : $0 }
        let lastModified = lastModifiedDate == nil ? nil : fields.lastModified
        let vary = fields.varyNames
        let variesOnEverything = vary.contains("*") || vary.count > Self.maxVaryNames
        let varyNames = variesOnEverything ? [] : vary
        let varyValues = varyNames.map { Self.normalizedValue(of: $0, in: request.headers) }
        let byteCount = headers.reduce(response.body.count) { $0 + $1.name.utf8.count + $1.value.utf8.count }
        let contentRange = response.statusCode == 206 ? fields.contentRange.flatMap(ContentRange.init) : nil
        self.stored = Stored(
            Fields(
                response: stored, requestTime: requestTime, responseTime: responseTime,
                freshnessLifetime: lifetime.seconds, isHeuristic: lifetime.isHeuristic, etag: etag,
                lastModified: lastModified, byteCount: byteCount, contentRange: contentRange,
                defaultFreshness: defaultFreshness, directives: directives, correctedInitialAge: correctedInitialAge,
                varyNames: varyNames, varyValues: varyValues, variesOnEverything: variesOnEverything))
    }

    /// The current age in seconds (`current_age`, RFC 9111 §4.2.3).
    ///
    /// - Parameter now: The current date, from the client's date source.
    public func age(at now: Date) -> TimeInterval {
        Freshness.currentAge(correctedInitialAge: correctedInitialAge, responseTime: responseTime, now: now)
    }

    /// Whether the response is fresh (§4.2): its freshness lifetime exceeds its current age.
    ///
    /// - Parameter now: The current date, from the client's date source.
    public func isFresh(at now: Date) -> Bool {
        freshnessLifetime > age(at: now)
    }

    /// The stored response as it is served at `now`, with an `Age` field (RFC 9111 §5.1) in whole seconds.
    func served(at now: Date) -> TransportResponse {
        servedAt(now).response
    }

    /// ``served(at:)``, reusing ``lastServed`` when it was made for the same whole-second age.
    func servedAt(_ now: Date) -> Served {
        let seconds = age(at: now)
        let age = seconds.isFinite ? Int(min(max(seconds, 0), Double(Int32.max))) : 0
        if let lastServed, lastServed.age == age { return lastServed }
        var served = response
        served.headers["Age"] = String(age)
        return Served(age: age, response: served)
    }

    /// Whether this stored response was selected by `headers` (§4.1): every header named by `Vary` has the same
    /// normalized value (or is absent in both).
    func matches(_ headers: HeaderFields) -> Bool {
        zip(varyNames, varyValues).allSatisfy { Self.normalizedValue(of: $0, in: headers) == $1 }
    }

    /// This entry freshened by a `304 Not Modified` (RFC 9111 §4.3.4, §3.2): every field of the 304 replaces the
    /// stored fields of that name, except framing fields; the body is kept; the times restart. The stored `Age` goes
    /// in any case: it described the response as first received, and kept beside the new times it would make a
    /// response that arrived stale stale again at once, revalidated on every call.
    ///
    /// - Parameters:
    ///   - notModified: The 304 response.
    ///   - request: The conditional request it answered.
    ///   - requestTime: When the conditional request was sent.
    ///   - responseTime: When the 304 arrived.
    public func updated(
        with notModified: TransportResponse, request: TransportRequest, requestTime: Date, responseTime: Date
    ) -> CachedResponse {
        let merged = TransportResponse(
            statusCode: response.statusCode, headers: Self.updatedFields(response.headers, with: notModified.headers),
            body: response.body)
        return CachedResponse(
            response: merged, request: request, requestTime: requestTime, responseTime: responseTime,
            defaultFreshness: defaultFreshness)
    }

    /// `stored` updated with `newer` (§3.2): each field `newer` has replaces the stored ones of that name, except
    /// framing fields; the stored `Age` goes (see ``updated(with:request:requestTime:responseTime:)``).
    static func updatedFields(_ stored: HeaderFields, with newer: HeaderFields) -> HeaderFields {
        var headers = stored
        let replaced = Set(newer.lazy.map(\.canonicalName).filter { !isKeptOnUpdate($0) })
        for name in replaced.union(["age"]) where headers.contains(name) { headers.remove(name: name) }
        for field in newer where replaced.contains(field.canonicalName) {
            headers.add(name: field.name, value: field.value)
        }
        return headers
    }

    /// The comma-separated elements of every `name` field, trimmed and lowercased, empty ones dropped.
    static func listValues(_ headers: HeaderFields, _ name: String) -> [String] {
        listMembers(headers.values(for: name))
    }

    /// The members of list-valued field lines, trimmed and lower-cased, empty members dropped.
    static func listMembers(_ lines: [String]) -> [String] {
        var members: [String] = []
        for line in lines { appendListMembers(of: line, to: &members) }
        return members
    }

    /// Appends the members of one list-valued line, read over its bytes: splitting it into substrings, trimming and
    /// lower-casing each cost about 6,000 instructions for `Connection: keep-alive`, which nearly every response has.
    /// A line with a byte outside ASCII is lower-cased as Unicode text, as before.
    private static func appendListMembers(of line: String, to members: inout [String]) {
        var line = line
        let isASCII = line.withUTF8 { bytes in
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return false }
            var start = 0
            for end in 0...bytes.count where end == bytes.count || bytes[end] == UInt8(ascii: ",") {
                var lower = start
                var upper = end
                while lower < upper, bytes[lower] == 0x20 || bytes[lower] == 0x09 { lower += 1 }
                while upper > lower, bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09 { upper -= 1 }
                if lower < upper { members.append(lowercased(UnsafeBufferPointer(rebasing: bytes[lower..<upper]))) }
                start = end + 1
            }
            return true
        }
        guard !isASCII else { return }
        for member in line.split(separator: ",") {
            let trimmed = member.trimmingOptionalWhitespace
            if !trimmed.isEmpty { members.append(trimmed.lowercased()) }
        }
    }

    /// Whether every `Connection` field of `headers` is `keep-alive` (in any case, with optional whitespace around).
    private static func namesOnlyKeepAlive(_ headers: HeaderFields) -> Bool {
        let keepAlive = "keep-alive".utf8
        for index in headers.fields.indices where headers.fields[index].hasName("connection") {
            // Of the same length, containing it is being it.
            let value = headers.fields[index].value.trimmingOptionalWhitespace.utf8
            guard value.count == keepAlive.count, value.containsIgnoringASCIICase(keepAlive) else { return false }
        }
        return true
    }

    /// ASCII `bytes` as a lower-case string, copied as they are when they are lower case already (the usual case).
    private static func lowercased(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        guard bytes.contains(where: { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
            return String(decoding: bytes, as: UTF8.self)
        }
        return String(unsafeUninitializedCapacity: bytes.count) { buffer in
            for index in bytes.indices { buffer[index] = ASCII.lowercased(bytes[index]) }
            return bytes.count
        }
    }

    /// `headers` without the fields a cache never stores: hop-by-hop and per-recipient fields, those the
    /// `Connection` field names, and every field `credentials` names (a token a server hands out in `X-Auth-Token`
    /// belongs to the caller who received it, as a cookie does, and must not reach the disk). Most responses carry
    /// none of them beyond `Connection` itself, and are copied only when there is something to remove.
    static func storedHeaders(_ headers: HeaderFields, credentials: CredentialPolicy = .standard) -> HeaderFields {
        let fields = headers.fields
        // `Connection` is itself never stored, so a response without any such field names nothing to remove either:
        // one check per field settles the common case. The policy's filter rules out nearly every field a response
        // carries without hashing its name.
        guard let first = fields.firstIndex(where: { isRemoved($0.canonicalName, credentials) }) else { return headers }
        // `Connection: keep-alive`, which nearly every HTTP/1.1 server sends, names only a field that is never stored
        // anyway: nothing to list then.
        let listed = namesOnlyKeepAlive(headers) ? [] : listValues(headers, "connection")
        // The fields kept are kept as they are: rebuilding them from name and value lower-cased every name again.
        // Those before the first removed one were checked already (but not against what `Connection` lists).
        var kept: [HeaderFields.Field] = []
        kept.reserveCapacity(fields.count - 1)
        for field in fields[..<first] where listed.isEmpty || !listed.contains(field.canonicalName) {
            kept.append(field)
        }
        for field in fields[(first + 1)...]
        where !isRemoved(field.canonicalName, credentials) && !listed.contains(field.canonicalName) {
            kept.append(field)
        }
        return HeaderFields(fields: kept)
    }

    /// Whether ``storedHeaders(_:credentials:)`` leaves the field named `name` out.
    @inline(__always)
    private static func isRemoved(_ name: String, _ credentials: CredentialPolicy) -> Bool {
        isNeverStored(name) || credentials.contains(canonicalName: name)
    }

    /// A request header's value for `Vary` matching (§4.1), normalised as far as RFC 9110 allows so that
    /// equivalent requests select one variant: lines combined, list members trimmed of the whitespace around them
    /// (§5.6.1) and joined by `,`; tokens lowercased in fields whose values are case-insensitive (`Accept*`), and
    /// members sorted in `Accept-Encoding` and `Accept-Language`, whose order carries no meaning (preference is in
    /// their `q` weights). Commas inside quoted strings do not split.
    static func normalizedValue(of name: String, in headers: HeaderFields) -> String? {
        guard let value = headers[name] else { return nil }
        let field = name.lowercased()
        var members = listMembers(value)
        if caseInsensitiveFields.contains(field) { members = members.map { $0.lowercased() } }
        if unorderedFields.contains(field) { members.sort() }
        return members.joined(separator: ",")
    }

    /// Request fields whose list members are case-insensitive tokens (RFC 9110 §12.5).
    static let caseInsensitiveFields: Set<String> = ["accept", "accept-charset", "accept-encoding", "accept-language"]
    /// Request fields whose member order means nothing (RFC 9110 §12.5.3, §12.5.4).
    static let unorderedFields: Set<String> = ["accept-encoding", "accept-language"]

    /// The members of a comma-separated list, trimmed of spaces and tabs, empty ones dropped; commas within
    /// quoted strings (with their escapes) belong to the member.
    static func listMembers(_ value: String) -> [String] {
        var members: [String] = []
        var current: [UInt8] = []
        var inQuotes = false
        var escaped = false
        func finish() {
            let trimmed = current.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }
            if !trimmed.isEmpty { members.append(String(decoding: trimmed.reversed(), as: UTF8.self)) }
            current.removeAll(keepingCapacity: true)
        }
        for byte in value.utf8 {
            if escaped {
                escaped = false
            } else if inQuotes, byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inQuotes.toggle()
            } else if byte == UInt8(ascii: ","), !inQuotes {
                finish()
                continue
            }
            current.append(byte)
        }
        finish()
        return members
    }
}

extension CachedResponse: CustomReflectable {
    /// The response and the times, never the request header values recorded for `Vary` matching (with
    /// `Vary: Authorization` they would be a credential): `dump` shows only their names.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "response": response, "requestTime": requestTime, "responseTime": responseTime,
                "freshnessLifetime": freshnessLifetime, "isHeuristic": isHeuristic, "etag": etag as Any,
                "lastModified": lastModified as Any, "byteCount": byteCount, "varyNames": varyNames,
            ],
            displayStyle: .struct)
    }
}
