import Foundation

extension ResponseCache {
    // MARK: Storing

    /// Stores `response` to `request` if RFC 9111 §3 allows it (see ``CachedResponse`` and the type
    /// documentation), replacing the variant the request selected. A final response that may not be stored
    /// (`no-store`, `Vary: *`, too large) removes that variant instead, since it is no longer current.
    ///
    /// - Parameters:
    ///   - response: The response as received.
    ///   - request: The request as looked up (before adapters), so that its key matches later lookups.
    ///   - partition: The caller's identity, or `nil`.
    ///   - requestTime: When the request was sent.
    ///   - responseTime: When the response arrived.
    ///   - defaultFreshness: How long a response that names no lifetime stays fresh (no `max-age`, no `Expires`):
    ///     five minutes, say, where the server says nothing. It takes the place of the heuristic (RFC 9111
    ///     §4.2.2) and applies where one could, but never to `no-store`, `no-cache` or `must-revalidate`.
    /// - Returns: Whether the response is now stored.
    @discardableResult
    public nonisolated func store(
        _ response: TransportResponse, for request: TransportRequest, partition: String?, requestTime: Date,
        responseTime: Date, defaultFreshness: Duration? = nil
    ) async -> Bool {
        storeCountingEvictions(
            response, for: request, partition: partition, requestTime: requestTime, responseTime: responseTime,
            defaultFreshness: defaultFreshness
        ).storedBytes != nil
    }

    /// ``store(_:for:partition:requestTime:responseTime:defaultFreshness:)``, telling the client's events what it did: the stored
    /// entry's size (`nil` when nothing was stored) and how many entries it evicted.
    ///
    /// Synchronous, as a lookup is: nothing in it waits (the entry is parsed outside the cache's lock, then put under
    /// it), and the client stores from its flight, where an async step would add a frame to the flight's task.
    ///
    /// `responseTime` is read only when an entry is built: a response that is not stored needs no clock.
    nonisolated func storeCountingEvictions(
        _ response: TransportResponse, for request: TransportRequest, partition: String?, requestTime: Date,
        responseTime: @autoclosure () -> Date, defaultFreshness: Duration? = nil
    ) -> (storedBytes: Int?, evicted: Int) {
        let status = response.statusCode
        guard request.method == .get, Freshness.isStorableFinalStatus(status) else { return (nil, 0) }
        // A transport reports the URL a response came from; only one that a redirect changed (not one spelled
        // differently: the key is compared, and only when the URLs differ at all) is stored elsewhere.
        if let final = response.url, final != request.url, RequestKey.normalize(final) != request.urlKey {
            return storeRedirected(
                response, from: final, for: request, partition: partition, requestTime: requestTime,
                responseTime: responseTime(), defaultFreshness: defaultFreshness)
        }
        let url = request.urlText
        let partition = CachePartition(identity: partition, request: request)
        let headers = response.headers  // one retain, where each use of `response.headers` took its own
        // A `no-store` on either side removes the variant the response supersedes. The response's is looked at first,
        // so that when it forbids storage the request's directives are never parsed. The common answer (a
        // heuristically cacheable status, no `no-store` in sight) goes straight to the entry, which parses its fields
        // once; only the others have their `Cache-Control` parsed here first, once.
        if !Freshness.isHeuristicallyCacheable(status) || Self.mentionsNoStore(headers) {
            let directives = CacheControl.parse(cacheControlOf: headers)
            // A status with no lifetime to use (a 500 without `max-age`) leaves what is stored alone: it may
            // still stand in under `stale-if-error`; unless the request said `no-store`.
            guard
                Freshness.hasStorableFreshness(
                    status: status, directives: directives, hasExpires: headers.contains("Expires"))
            else {
                if Freshness.requestDirectives(request.headers).noStore { put(nil, url: url, partition, request) }
                return (nil, 0)
            }
            if Freshness.forbidsStorage(directives, status: status) {
                put(nil, url: url, partition, request)
                return (nil, 0)
            }
        }
        let requestDirectives = Freshness.requestDirectives(request.headers)
        if requestDirectives.noStore {
            put(nil, url: url, partition, request)
            return (nil, 0)
        }
        let fields = CachedResponse.fields(
            response: response, request: request, requestTime: requestTime, responseTime: responseTime(),
            defaultFreshness: defaultFreshness.map { max(0, $0.timeInterval) })
        var timing: CachedResponse.Timing?
        let isStorable = Freshness.isStorable(fields, requestDirectives: requestDirectives) { fields in
            let workedOut = fields.timing()
            timing = workedOut
            return workedOut
        }
        guard isStorable else {
            put(nil, url: url, partition, request)
            return (nil, 0)
        }
        // The common case, a complete response whose times nothing read yet, with no disk tier to write: its fields are
        // stored as they are, and boxed when a lookup first returns them.
        if timing == nil, disk == nil, fields.received.statusCode != 206 {
            let byteCount = fields.byteCount
            let insertion = put(fields: consume fields, url: url, partition, request)
            return (insertion.stored ? byteCount : nil, insertion.evicted)
        }
        var entry = timing.map { CachedResponse(fields: fields, timing: $0) } ?? CachedResponse(fields: fields)
        if entry.isPartial, let stored = self.entry(url: url, partition: partition, request),
            let combined = stored.combined(with: entry, request: request)
        {
            entry = combined
        }
        let insertion = put(entry, url: url, partition, request)
        return (insertion.stored ? entry.byteCount : nil, insertion.evicted)
    }

    /// A response the transport reached through redirects: stored under the URL it came from, with the request's
    /// header fields (they select its `Vary` variant) and partition, never under the URL asked for. That URL
    /// answered with a redirect, which the transport followed: it may point elsewhere tomorrow, and the final hop's
    /// freshness (a file fresh for a year) says nothing of it. Whatever it stored before is no longer its answer and
    /// goes. (RFC 9111 would let a `301` or `308` be stored itself; the transport never hands one over.)
    @inline(never)
    private nonisolated func storeRedirected(
        _ response: TransportResponse, from final: URL, for request: TransportRequest, partition: String?,
        requestTime: Date, responseTime: Date, defaultFreshness: Duration?
    ) -> (storedBytes: Int?, evicted: Int) {
        put(nil, url: request.urlText, CachePartition(identity: partition, request: request), request)
        var atFinal = request
        atFinal.url = final
        var stored = response
        stored.url = nil  // Now the request's own URL.
        return storeCountingEvictions(
            stored, for: atFinal, partition: partition, requestTime: requestTime, responseTime: responseTime,
            defaultFreshness: defaultFreshness)
    }

    /// Stores the response to a `POST` as the response to a later `GET` of the same URL when RFC 9111 §4 allows it:
    /// its `Content-Location` names the request's own URL and it carries explicit freshness (`max-age` or
    /// `Expires`), so the server said the body is a representation of that resource, and for how long.
    ///
    /// - Parameters:
    ///   - response: The response to the `POST`.
    ///   - request: The `POST`, after adapters; its header fields select the `Vary` variant.
    ///   - partition: The caller's identity, or `nil`.
    ///   - requestTime: When the request was sent.
    ///   - responseTime: When the response arrived.
    /// - Returns: The stored entry's size, or `nil` when nothing was stored.
    nonisolated(nonsending) func storeContentLocation(
        _ response: TransportResponse, for request: TransportRequest, partition: String?, requestTime: Date,
        responseTime: Date
    ) async -> Int? {
        guard request.method == .post, let location = response.headers["Content-Location"],
            let target = URL(string: location.trimmingCharacters(in: .whitespaces), relativeTo: request.url),
            RequestKey.normalize(target.absoluteURL) == request.urlKey
        else { return nil }
        let directives = CacheControl.parse(cacheControlOf: response.headers)
        guard directives.maxAge != nil || response.headers.contains("Expires") else { return nil }
        var get = request
        get.method = .get
        get.body = nil
        return storeCountingEvictions(
            response, for: get, partition: partition, requestTime: requestTime, responseTime: responseTime
        ).storedBytes
    }

    /// Applies a `304 Not Modified` to the stored response it validates (RFC 9111 §4.3.4, §3.2) and returns the
    /// updated response, to be served with its stored body.
    ///
    /// The 304 is merged into storage only while `entry` is still the stored generation the request selects: an
    /// entry stored after the conditional request was sent is newer than what the 304 speaks of, and is kept.
    ///
    /// - Parameters:
    ///   - entry: The stored response the conditional request was made from, as this cache returned it.
    ///   - notModified: The 304.
    ///   - request: The request as looked up (without the added conditional fields).
    ///   - partition: The caller's identity, or `nil`.
    ///   - requestTime: When the conditional request was sent.
    ///   - responseTime: When the 304 arrived.
    /// - Returns: The updated entry; `nil` when the 304 validates nothing this cache holds: it names a different
    ///   entity tag (the stale variant is then removed), or the entry was removed or evicted meanwhile. A caller
    ///   who sent a plain `GET` then needs the request sent again without conditions.
    public nonisolated func revalidated(
        _ entry: CachedResponse, with notModified: TransportResponse, for request: TransportRequest, partition: String?,
        requestTime: Date, responseTime: Date
    ) async -> CachedResponse? {
        let url = request.urlText
        let key = CachePartition(identity: partition, request: request)
        let candidates = state.withLock { $0.storage.candidates(url: url, partition: key) }
        var current = candidates.first { $0.entry.matches(request.headers) }
        var generation = entry.generation
        if current == nil, let found = promoted(url: url, partition: key, request, seen: candidates.map(\.id)),
            found.generation != 0, found.isSameStoredResponse(as: entry)
        {
            // It left memory while the request was out, but the disk still holds it: back in memory, it is merged.
            generation = found.generation
            current = state.withLock { $0.storage.candidates(url: url, partition: key) }.first { $0.id == generation }
        }
        if let tag = notModified.headers["ETag"], let stored = entry.etag, !Self.weakMatch(tag, stored) {
            if let current, current.id == generation { removeIfCurrent(current, url: url, key, request) }
            return nil
        }
        guard let current else { return nil }  // Removed or evicted: the body it validated is gone.
        let updated = entry.updated(
            with: notModified, request: request, requestTime: requestTime, responseTime: responseTime)
        guard current.id == generation else { return updated }  // Superseded: serve, but keep the newer.
        let isStorable = Freshness.isStorable(updated, requestDirectives: Freshness.requestDirectives(request.headers))
        let (merged, ticket) = state.withLock { state -> (Bool, UInt64?) in
            guard state.storage.holds(current) else { return (false, nil) }
            state.counters.revalidations += 1
            guard isStorable else {
                state.storage.removeVariants(url: url, partition: key, matching: request.headers)
                return (true, disk?.reserve(removing: [url.text]))
            }
            let insertion = state.storage.insert(updated, url: url, partition: key, replacing: request.headers)
            state.counters.evictions += insertion.evicted
            if insertion.stored { state.counters.stores += 1 }
            return (true, disk.map { insertion.stored ? $0.reserve() : $0.reserve(removing: [url.text]) })
        }
        if merged { persist(isStorable ? updated : nil, url: url, key, request, ticket: ticket) }
        return merged ? updated : nil
    }
}
