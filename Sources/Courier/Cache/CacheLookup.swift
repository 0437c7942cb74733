import Foundation

/// What a ``ResponseCache`` decided about one request: serve, revalidate, or send.
///
/// ```swift
/// switch await cache.lookup(request, partition: nil, policy: .useProtocolPolicy, now: Date()) {
/// case .hit(let entry): return entry.response
/// case .validate(_, let conditional): send(conditional)  // 304 → cache.revalidated(...)
/// ...
/// }
/// ```
public enum CacheLookup: Sendable {
    /// Serve this stored response; send nothing (RFC 9111 §4.2, or `max-stale`, or a policy that accepts any
    /// stored response).
    case hit(CachedResponse)
    /// Serve this stale response now and send `revalidation` in the background (`stale-while-revalidate`,
    /// RFC 5861 §3, or ``CachePolicy/staleWhileRevalidate``).
    case staleWhileRevalidate(CachedResponse, revalidation: TransportRequest)
    /// Send `request` before using the stored response (§4.3.1): it carries `If-None-Match` when the entry has an
    /// `ETag`, else `If-Modified-Since` when it has a valid `Last-Modified`, else no condition at all. The entry
    /// is kept for a `304` (§4.3.4) and for `stale-if-error`.
    case validate(CachedResponse, request: TransportRequest)
    /// Nothing usable is stored (or the request bypasses the cache): send the request as it is.
    case miss
    /// The request may not use the network (`only-if-cached`, ``CachePolicy/onlyIfCached``) and nothing usable is
    /// stored: RFC 9111 §5.2.1.7 answers `504`; ``APIClient`` throws ``APIError/notCached(_:)``.
    case unsatisfiable
}

extension CacheLookup {
    /// Request header fields that make a request conditional. The caller's own validation is passed through
    /// untouched: such requests are neither answered from the cache nor given extra conditions. A plain `Range`
    /// is answered from storage when the stored bytes cover it (see ``decide(range:entry:request:directives:policy:now:)``).
    static let callerConditionalFields = [
        "if-none-match", "if-modified-since", "if-match", "if-unmodified-since", "if-range",
    ]

    /// Whether `request` is one the cache may answer: a `GET` without conditional fields.
    static func isServable(_ request: TransportRequest) -> Bool {
        guard request.method == .get else { return false }
        // One pass over the request's fields, not one per conditional name; each of those names starts with "if-".
        return !request.headers.fields.contains { field in
            field.canonicalName.utf8.first == UInt8(ascii: "i") && callerConditionalFields.contains(field.canonicalName)
        }
    }

    /// The decision for a request whose stored, `Vary`-matching response is `entry` (if any). Pure: `now` is the
    /// only clock, and nothing is parsed here.
    static func decide(
        entry: CachedResponse?, request: TransportRequest, directives: CacheControl, policy: CachePolicy, now: Date
    ) -> CacheLookup {
        let mayUseNetwork = policy != .onlyIfCached && !directives.onlyIfCached
        guard let entry else { return mayUseNetwork ? .miss : .unsatisfiable }
        switch policy {
        case .reloadIgnoringCache: return .miss
        case .returnCacheElseLoad, .onlyIfCached: return .hit(entry)
        case .reloadRevalidatingCache: return .validate(entry, request: conditional(request, validating: entry))
        case .useProtocolPolicy, .staleWhileRevalidate, .returnCacheWhenOffline: break
        }
        let decision = protocolDecision(
            entry: entry, request: request, directives: directives, policy: policy, now: now)
        switch decision {
        // Revalidating, even in the background, would reach the network (§5.2.1.7).
        case .validate, .staleWhileRevalidate: return mayUseNetwork ? decision : .unsatisfiable
        case .hit, .miss, .unsatisfiable: return decision
        }
    }

    /// The decision for a `Range` request (RFC 9111 §3.3–3.4): a `206` cut from the stored bytes when they cover
    /// the range and the stored response may be used as it is (fresh, or allowed stale); otherwise the request is
    /// sent as asked, never revalidated first. A range that is not one well-formed byte range (`spec` is `nil`)
    /// always goes to the server.
    static func decide(
        range spec: ByteRangeSpec?, entry: CachedResponse?, request: TransportRequest, directives: CacheControl,
        policy: CachePolicy, now: Date
    ) -> CacheLookup {
        let mayUseNetwork = policy != .onlyIfCached && !directives.onlyIfCached
        guard let spec, let entry, let answer = entry.answering(spec) else {
            return mayUseNetwork ? .miss : .unsatisfiable
        }
        switch decide(entry: entry, request: request, directives: directives, policy: policy, now: now) {
        case .hit: return .hit(answer)
        case .unsatisfiable: return .unsatisfiable
        case .miss, .validate, .staleWhileRevalidate: return mayUseNetwork ? .miss : .unsatisfiable
        }
    }

    /// RFC 9111 §4 with the request's directives (§5.2.1) and the response's (§5.2.2, RFC 5861, RFC 8246).
    private static func protocolDecision(
        entry: CachedResponse, request: TransportRequest, directives: CacheControl, policy: CachePolicy, now: Date
    ) -> CacheLookup {
        // Built only when the decision is to revalidate: a fresh hit needs no conditional request.
        var validation: CacheLookup { .validate(entry, request: conditional(request, validating: entry)) }
        let age = entry.age(at: now)
        let lifetime = entry.freshnessLifetime
        let isFresh = lifetime > age
        if entry.directives.noCache { return validation }  // §5.2.2.4: never reused without revalidation.
        // A reload (`no-cache`, or a `max-age` the entry is too old for) revalidates, except an immutable response
        // still in its lifetime (RFC 8246 §2).
        let reload = directives.noCache || directives.maxAge.map { age > TimeInterval($0) } == true
        if reload, !(entry.directives.immutable && isFresh) { return validation }
        if isFresh {
            if let minFresh = directives.minFresh, lifetime - age < TimeInterval(minFresh) { return validation }
            return .hit(entry)
        }
        guard Freshness.mayServeStale(entry) else { return validation }  // §4.2.4
        let staleness = age - lifetime
        switch directives.maxStale {
        case .any?: return .hit(entry)
        case .seconds(let limit)? where staleness <= TimeInterval(limit): return .hit(entry)
        default: break
        }
        if policy == .staleWhileRevalidate
            || entry.directives.staleWhileRevalidate.map({ staleness <= TimeInterval($0) }) == true
        {
            return .staleWhileRevalidate(entry, revalidation: conditional(request, validating: entry))
        }
        return validation
    }

    /// `request` with the validator of `entry` (§4.3.1): `If-None-Match` with the entity tag, else
    /// `If-Modified-Since` with `Last-Modified` (a server ignores the latter when the former is present, RFC 9110
    /// §13.1.3, so one is enough). Without either, the request is sent unconditionally.
    static func conditional(_ request: TransportRequest, validating entry: CachedResponse) -> TransportRequest {
        var conditional = request
        if let etag = entry.etag {
            conditional.headers["If-None-Match"] = etag
        } else if let lastModified = entry.lastModified {
            conditional.headers["If-Modified-Since"] = lastModified
        }
        return conditional
    }
}
