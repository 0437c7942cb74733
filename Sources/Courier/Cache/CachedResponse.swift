import Foundation
import Synchronization

/// A response held by a ``ResponseCache``, with everything needed to judge its age and freshness.
///
/// Header parsing happens once per entry, outside the cache's lock: the `Cache-Control` directives, `ETag` and `Vary`
/// when the entry is made, and `Date`, `Expires`, `Last-Modified` and `Age` when something first reads the entry's
/// age or freshness. Lookups then only compare numbers.
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
        get { stored.fields.storedResponse(reserving: 0) }
        set {
            var fields = stored.fields
            fields.received = newValue
            fields.removed = 0
            // The times keep what the stored response said: the derived answer's own status is not what they describe.
            stored = Stored(fields, timing: stored.timing)
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
    public var freshnessLifetime: TimeInterval { stored.timing.freshnessLifetime }
    /// Whether ``freshnessLifetime`` is a heuristic (§4.2.2) rather than what the server said.
    public var isHeuristic: Bool { stored.timing.isHeuristic }
    /// The `ETag` of the stored response, used for `If-None-Match` (§4.3.1).
    public var etag: String? { stored.fields.etag }
    /// The `Last-Modified` value, when it is a valid HTTP date; used for `If-Modified-Since` (§4.3.1).
    public var lastModified: String? { stored.timing.lastModifiedIsValid ? stored.fields.lastModified : nil }
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
    var correctedInitialAge: TimeInterval { stored.timing.correctedInitialAge }
    /// Lowercased names from `Vary` (§4.1), and the request's values for them when the response was stored.
    var varyNames: [String] { stored.fields.varyNames }
    var varyValues: [String?] { stored.fields.varyValues }
    /// `Vary: *` (§4.1), or a `Vary` longer than ``maxVaryNames``: the response matches no later request and is
    /// never stored.
    var variesOnEverything: Bool { stored.fields.variesOnEverything }

    /// What the entry holds, parsed once, behind one reference: a lookup copies the entry out of storage and through
    /// the plan, and as a plain struct of fifteen fields each copy moved and retained all of them.
    private var stored: Stored

    /// The stored response's status, read without building the response (see ``Fields/received``).
    var statusCode: Int { stored.fields.received.statusCode }
    /// The stored response's body, read without building the response.
    var body: Data { stored.fields.received.body }

    /// Whether the stored response has a field named `canonicalName` (lower case), read without building it.
    func storesField(named canonicalName: String) -> Bool {
        stored.fields.storesField(named: canonicalName)
    }

    /// The parsed fields, as a ``CacheStorage`` keeps an entry no lookup has returned yet.
    var fields: Fields { stored.fields }

    /// The entry's times (see ``Timing``), worked out when first read.
    var timing: Timing { stored.timing }

    /// An entry of `fields`, whose times are worked out when first read.
    init(fields: Fields) {
        stored = Stored(fields)
    }

    /// An entry of `fields` whose times were worked out already.
    init(fields: Fields, timing: Timing) {
        stored = Stored(fields, timing: timing)
    }

    struct Fields: Sendable {
        /// The response as received, shared with whoever else holds it: the fields `removed` marks are not part of
        /// what is stored, and ``storedResponse(reserving:)`` leaves them out when the stored response is read.
        /// Building the stored header list and response when the entry was made cost two allocations and about
        /// 1,000 instructions per stored response (and their release at eviction), for a list that nearly every
        /// response needs only when it is served, once a second at most (``CachedResponse/Served``), which copies
        /// the header fields to add `Age` anyway.
        var received: TransportResponse
        /// Bit `i` set: `received.headers.fields[i]` is not stored. Only hop-by-hop fields are marked: a response
        /// with a cookie or a credential to leave out is kept without it (``StoredFields/gathered(_:credentials:)``).
        var removed: UInt64
        var requestTime: Date
        var responseTime: Date
        /// The `Date`, `Last-Modified` and `Expires` values and the `Age` lines as received, parsed into the entry's
        /// ``Timing`` when it is first read: a service that stores responses it never asks for again (a new URL each
        /// call) parsed two dates per stored response for nothing, about a tenth of storing one.
        var date: String?
        var lastModified: String?
        var expires: String?
        var age: [String]
        var etag: String?
        var byteCount: Int
        var contentRange: ContentRange?
        var defaultFreshness: TimeInterval?
        var directives: CacheControl
        var varyNames: [String]
        var varyValues: [String?]
        var variesOnEverything: Bool

        /// The stored response: `received` itself when it keeps every field and names no URL (a stored response is
        /// its request's), else a new response of the fields kept, with room for `extra` more in its header list.
        func storedResponse(reserving extra: Int) -> TransportResponse {
            guard removed != 0 || received.url != nil else { return received }
            let fields = received.headers.fields
            var kept: [HeaderFields.Field] = []
            kept.reserveCapacity(fields.count - removed.nonzeroBitCount + extra)
            for index in fields.indices where removed & (1 << UInt64(index)) == 0 { kept.append(fields[index]) }
            return TransportResponse(
                statusCode: received.statusCode, headers: HeaderFields(fields: kept), body: received.body)
        }

        /// Whether the stored response has a field named `canonicalName` (lower case), read without building it.
        func storesField(named canonicalName: String) -> Bool {
            let fields = received.headers.fields
            return fields.indices.contains { fields[$0].hasName(canonicalName) && removed & (1 << UInt64($0)) == 0 }
        }

        /// ``CachedResponse/isWellFormedPartial``.
        var isWellFormedPartial: Bool {
            guard let contentRange else { return false }
            return contentRange.bytes.count == received.body.count
        }

        /// ``CachedResponse/matches(_:)``.
        func matches(_ headers: HeaderFields) -> Bool {
            zip(varyNames, varyValues).allSatisfy { CachedResponse.normalizedValue(of: $0, in: headers) == $1 }
        }

        /// The entry's ``Timing``, from its date fields, directives and times.
        func timing() -> Timing {
            let date = date.flatMap { HTTPDate.parse($0, now: responseTime) }
            let dateValue = date ?? responseTime  // RFC 9110 §6.6.1: a recipient with a clock supplies the Date.
            let lastModifiedDate = lastModified.flatMap { HTTPDate.parse($0, now: responseTime) }
            // §4.2.1: an invalid Expires (such as "0") is a time in the past.
            let expires = expires.map { HTTPDate.parse($0, now: responseTime) ?? .distantPast }
            let lifetime = Freshness.lifetime(
                directives: directives, expires: expires, date: dateValue, lastModified: lastModifiedDate,
                statusCode: received.statusCode, defaultFreshness: defaultFreshness)
            let correctedInitialAge = Freshness.correctedInitialAge(
                ageValue: Freshness.ageValue(age), date: dateValue, requestTime: requestTime,
                responseTime: responseTime)
            return Timing(
                freshnessLifetime: lifetime.seconds, isHeuristic: lifetime.isHeuristic,
                correctedInitialAge: correctedInitialAge, lastModifiedIsValid: lastModifiedDate != nil)
        }
    }

    /// What the entry's times say, worked out from ``Fields`` (RFC 9111 §4.2): its freshness lifetime, whether that is
    /// a heuristic, its `corrected_initial_age`, and whether its `Last-Modified` is a valid HTTP date.
    struct Timing: Equatable {
        var freshnessLifetime: TimeInterval
        var isHeuristic: Bool
        var correctedInitialAge: TimeInterval
        var lastModifiedIsValid: Bool
    }

    /// The parsed fields, immutable: an entry that changes one (a range served from it) gets a new box.
    ///
    /// The ``Timing`` is worked out when first read and kept in atomics, so that every later read is a load: the
    /// entry is shared by every task that looks it up, and working it out twice at once gives the same value twice.
    final class Stored: Sendable {
        let fields: Fields
        /// ``Timing/freshnessLifetime``'s bits, stored last (releasing) once the others are: ``unset`` until then.
        private let lifetimeBits: Atomic<UInt64>
        private let ageBits: Atomic<UInt64>
        /// Bit 0: ``Timing/isHeuristic``; bit 1: ``Timing/lastModifiedIsValid``.
        private let flags: Atomic<UInt8>

        /// A NaN no computation yields (a computed NaN that happened to match would only be worked out again).
        private static let unset = UInt64.max

        init(_ fields: Fields) {
            self.fields = fields
            lifetimeBits = Atomic(Self.unset)
            ageBits = Atomic(0)
            flags = Atomic(0)
        }

        /// A box whose timing is known already.
        init(_ fields: Fields, timing: Timing) {
            self.fields = fields
            lifetimeBits = Atomic(timing.freshnessLifetime.bitPattern)
            ageBits = Atomic(timing.correctedInitialAge.bitPattern)
            flags = Atomic(Self.flags(of: timing))
        }

        var timing: Timing {
            let lifetime = lifetimeBits.load(ordering: .acquiring)
            if lifetime != Self.unset {
                let flags = flags.load(ordering: .relaxed)
                return Timing(
                    freshnessLifetime: Double(bitPattern: lifetime), isHeuristic: flags & 1 != 0,
                    correctedInitialAge: Double(bitPattern: ageBits.load(ordering: .relaxed)),
                    lastModifiedIsValid: flags & 2 != 0)
            }
            return workOutTiming()
        }

        /// The timing worked out from the fields and published: the age and the flags first, the lifetime last, so
        /// that a reader who sees the lifetime sees the others.
        @inline(never)
        private func workOutTiming() -> Timing {
            let timing = fields.timing()
            ageBits.store(timing.correctedInitialAge.bitPattern, ordering: .relaxed)
            flags.store(Self.flags(of: timing), ordering: .relaxed)
            lifetimeBits.store(timing.freshnessLifetime.bitPattern, ordering: .releasing)
            return timing
        }

        private static func flags(of timing: Timing) -> UInt8 {
            (timing.isHeuristic ? 1 : 0) | (timing.lastModifiedIsValid ? 2 : 0)
        }
    }

    /// The most `Vary` names a stored response may list. A server controls `Vary`, and each name costs a header
    /// lookup on every hit of that URL: a 7 kB `Vary` of 1,000 names made every hit 28–38× slower. Real responses
    /// vary on a handful of fields; a longer list is treated like `Vary: *` (not stored).
    static let maxVaryNames = 32

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
        self.init(
            fields: Self.fields(
                response: response, request: request, requestTime: requestTime, responseTime: responseTime,
                defaultFreshness: defaultFreshness))
    }

    /// The fields of the entry ``init(response:request:requestTime:responseTime:defaultFreshness:)`` makes, without
    /// its box: a ``CacheStorage`` keeps them as they are until a lookup first returns the entry.
    static func fields(
        response: TransportResponse, request: TransportRequest, requestTime: Date, responseTime: Date,
        defaultFreshness: TimeInterval?
    ) -> Fields {
        // Taken apart as it is returned: kept whole, the fields were copied out of it (a retain of each string and
        // list) and both copies destroyed.
        let (received, removed, headerBytes, fields) = StoredFields.gathered(response, credentials: request.credentials)
        let directives = CacheControl.parse(fields.cacheControl)
        let etag = fields.etag.map(\.trimmingOptionalWhitespace).flatMap { $0.isEmpty ? nil : $0 }
        let vary = fields.varyNames
        let variesOnEverything = vary.contains("*") || vary.count > maxVaryNames
        let varyNames = variesOnEverything ? [] : vary
        let varyValues = varyNames.map { normalizedValue(of: $0, in: request.headers) }
        let byteCount = headerBytes + response.body.count
        let contentRange = response.statusCode == 206 ? fields.contentRange.flatMap(ContentRange.init) : nil
        return Fields(
            received: received, removed: removed, requestTime: requestTime,
            responseTime: responseTime, date: fields.date, lastModified: fields.lastModified,
            expires: fields.expires, age: fields.age, etag: etag, byteCount: byteCount, contentRange: contentRange,
            defaultFreshness: defaultFreshness, directives: directives, varyNames: varyNames,
            varyValues: varyValues, variesOnEverything: variesOnEverything)
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
        // Built with room for `Age`: the fields are copied here in any case, once.
        var served = stored.fields.storedResponse(reserving: 1)
        served.headers["Age"] = String(age)
        return Served(age: age, response: served)
    }

    /// Whether this stored response was selected by `headers` (§4.1): every header named by `Vary` has the same
    /// normalized value (or is absent in both).
    func matches(_ headers: HeaderFields) -> Bool {
        stored.fields.matches(headers)
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
