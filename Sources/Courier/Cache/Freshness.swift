import Foundation

/// The arithmetic of RFC 9111 §4.2: pure functions over values parsed once per stored response.
///
/// Everything is in `TimeInterval` seconds, so no input (a date in year 1, an `Age` of 2³¹) can overflow or trap;
/// negative intervals from skewed clocks are clamped where the RFC clamps them.
enum Freshness {
    /// Whether `status` is heuristically cacheable (RFC 9110 §15.1).
    ///
    /// A `switch`, not a `static let` set: every stored response asks, and a set hashes the status and is read through
    /// `swift_once` (see ``ByteSet``).
    static func isHeuristicallyCacheable(_ status: Int) -> Bool {
        switch status {
        case 200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501: true
        default: false
        }
    }

    /// Whether the cache understands the caching requirements of final status `status` (RFC 9111 §3, §5.2.2.3): the
    /// heuristically cacheable ones, plus temporary redirects. `must-understand` stores only these.
    static func isUnderstood(_ status: Int) -> Bool {
        isHeuristicallyCacheable(status) || status == 302 || status == 307
    }

    /// Final status codes (RFC 9110 §15): a response with one of these may be stored when it carries explicit
    /// freshness, whether or not its semantics are heuristically cacheable (RFC 9111 §3). A `304` is never stored
    /// as such: it only freshens what is stored (§4.3.4).
    static func isStorableFinalStatus(_ status: Int) -> Bool {
        (200...599).contains(status) && status != 304
    }

    /// Whether a response with `status` and these `directives` names a lifetime the cache may use (RFC 9111 §3):
    /// a heuristically cacheable status, or explicit freshness (`max-age`, `Expires`), or `public`/`private`.
    /// `s-maxage` does not count: it is for shared caches.
    static func hasStorableFreshness(status: Int, directives: CacheControl, hasExpires: @autoclosure () -> Bool) -> Bool
    {
        // `Expires` is looked for last: finding it is a pass over the fields.
        isHeuristicallyCacheable(status) || directives.maxAge != nil || directives.isPublic || directives.isPrivate
            || hasExpires()
    }

    /// Whether `no-store` keeps a response out (§5.2.2.5), unless `must-understand` (§5.2.2.3) names a status whose
    /// requirements the cache understands: then the cache follows those requirements and ignores `no-store`.
    static func forbidsStorage(_ directives: CacheControl, status: Int) -> Bool {
        if directives.mustUnderstand { return !isUnderstood(status) }
        return directives.noStore
    }

    /// The fraction of `Date` − `Last-Modified` used as a heuristic lifetime (§4.2.2 suggests 10%).
    static let heuristicFraction = 0.1

    /// `freshness_lifetime` (§4.2.1): the first of `max-age`, `Expires` − `Date`, heuristic.
    ///
    /// `s-maxage` is ignored: it applies to shared caches only and this one is private.
    /// - Parameters:
    ///   - directives: The response's `Cache-Control`; an invalid `max-age` is `0` already (stale).
    ///   - expires: The `Expires` date; `.distantPast` when the field was invalid, such as `"0"`.
    ///   - date: `date_value`: the `Date` field, or the response time when it was missing or invalid.
    ///   - lastModified: The `Last-Modified` date, when valid.
    ///   - statusCode: The response's status; heuristics only apply to heuristically cacheable codes or `public`.
    ///   - defaultFreshness: The caller's lifetime for responses that name none, in seconds: used instead of the
    ///     heuristic, where one could apply, unless the response says `no-cache` or `must-revalidate`.
    static func lifetime(
        directives: CacheControl, expires: Date?, date: Date, lastModified: Date?, statusCode: Int,
        defaultFreshness: TimeInterval? = nil
    ) -> (seconds: TimeInterval, isHeuristic: Bool) {
        if let maxAge = directives.maxAge { return (TimeInterval(maxAge), false) }
        if let expires { return (max(0, expires.timeIntervalSince(date)), false) }
        if let defaultFreshness, isHeuristicallyCacheable(statusCode) || directives.isPublic,
            !directives.noCache, !directives.mustRevalidate, !directives.noStore
        {
            return (max(0, defaultFreshness), false)
        }
        guard isHeuristicallyCacheable(statusCode) || directives.isPublic,
            let lastModified, lastModified < date
        else { return (0, false) }
        return (date.timeIntervalSince(lastModified) * heuristicFraction, true)
    }

    /// `age_value` (§5.1): the first member of the first `Age` line, a non-negative integer saturating at 2³¹.
    /// A list (`7200, 0`, or two lines) is a sender's mistake that §5.1 resolves by using the first value, so an old
    /// response is not taken for a new one; a first value that is not digits (a sign, a fraction, a parameter) is
    /// invalid, and an invalid `Age` is ignored, that is, `0`.
    static func ageValue(_ values: [String]) -> TimeInterval {
        guard let line = values.first else { return 0 }
        let member = line.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let text = member.trimmingOptionalWhitespace
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return 0
        }
        var value = 0
        for byte in text.utf8 {
            value = min(value * 10 + Int(byte - UInt8(ascii: "0")), CacheControl.maximumDeltaSeconds)
        }
        return TimeInterval(value)
    }

    /// `corrected_initial_age` (§4.2.3): the larger of the apparent age (`response_time` − `date_value`, at least
    /// `0`) and the `Age` value plus the response delay (`response_time` − `request_time`).
    static func correctedInitialAge(
        ageValue: TimeInterval, date: Date, requestTime: Date, responseTime: Date
    ) -> TimeInterval {
        let apparentAge = max(0, responseTime.timeIntervalSince(date))
        let responseDelay = max(0, responseTime.timeIntervalSince(requestTime))
        return max(apparentAge, ageValue + responseDelay)
    }

    /// `current_age` (§4.2.3): the corrected initial age plus the time resident in the cache. A clock that went
    /// backwards counts as no resident time rather than making the response younger.
    static func currentAge(correctedInitialAge: TimeInterval, responseTime: Date, now: Date) -> TimeInterval {
        correctedInitialAge + max(0, now.timeIntervalSince(responseTime))
    }

    /// The request's cache directives: its `Cache-Control`, or `Pragma: no-cache` when it has none (§5.4).
    static func requestDirectives(_ headers: HeaderFields) -> CacheControl {
        // Most requests carry neither field: one pass over the names settles it without parsing.
        guard headers.fields.contains(where: { $0.hasName("cache-control") || $0.hasName("pragma") }) else {
            return CacheControl()
        }
        let lines = headers.values(for: "cache-control")
        var directives = CacheControl.parse(lines)
        if lines.isEmpty, CachedResponse.listValues(headers, "Pragma").contains("no-cache") {
            directives.noCache = true
        }
        return directives
    }

    /// Whether RFC 9111 §3 lets a private cache store `entry`, received for a `GET` with `requestDirectives`, and
    /// whether storing it is of any use.
    ///
    /// Stored: any final status but `304` with explicit freshness or `public`/`private`, or a heuristically
    /// cacheable one; no `no-store` on either side (a response's `no-store` yields to `must-understand` with an
    /// understood status, and `must-understand` with any other status forbids storing); not `Vary: *`. `private` and `Authorization` do not
    /// prevent storage: this cache is private and partitions entries by credential. A response that could never
    /// be reused (no lifetime, no validator, no stale window) is not kept, to spend memory only where it helps.
    static func isStorable(_ entry: CachedResponse, requestDirectives: CacheControl) -> Bool {
        isStorable(entry.fields, requestDirectives: requestDirectives, timing: { _ in entry.timing })
    }

    /// ``isStorable(_:requestDirectives:)`` for an entry's fields before they are boxed; `timing` gives their times,
    /// and is called only when no validator or stale window settles it (see ``CachedResponse/Timing``).
    static func isStorable(
        _ fields: CachedResponse.Fields, requestDirectives: CacheControl,
        timing: (CachedResponse.Fields) -> CachedResponse.Timing
    ) -> Bool {
        let status = fields.received.statusCode
        let directives = fields.directives
        guard isStorableFinalStatus(status), !forbidsStorage(directives, status: status), !requestDirectives.noStore,
            !fields.variesOnEverything,
            hasStorableFreshness(
                status: status, directives: directives, hasExpires: fields.storesField(named: "expires")),
            status != 206 || fields.isWellFormedPartial
        else { return false }
        // What needs no date parsed first: an entry's times are worked out when first read (``CachedResponse/Timing``),
        // and one with a validator is stored whatever they say.
        if fields.etag != nil || directives.staleWhileRevalidate != nil || directives.staleIfError != nil {
            return true
        }
        let timing = timing(fields)
        return timing.freshnessLifetime > 0 || timing.lastModifiedIsValid
    }

    /// Whether a stale `entry` may be served at all (§4.2.4): not when the server said `must-revalidate` or
    /// `no-cache`.
    static func mayServeStale(_ entry: CachedResponse) -> Bool {
        !entry.directives.mustRevalidate && !entry.directives.noCache
    }

    /// Whether a failed revalidation at `now` may fall back to the stale `entry` (`stale-if-error`, RFC 5861 §4).
    static func mayServeOnError(_ entry: CachedResponse, at now: Date) -> Bool {
        guard mayServeStale(entry), let window = entry.directives.staleIfError else { return false }
        return entry.age(at: now) - entry.freshnessLifetime <= TimeInterval(window)
    }
}
