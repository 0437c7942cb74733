import Foundation

extension APIClient {
    /// Step 3 of a call: answers from the cache, or says what to send and how to record the answer.
    ///
    /// A private call (see ``Adapted/isPrivate``) is neither answered from the cache nor stored, though an unsafe one
    /// still invalidates. Only `GET` is served and stored.
    ///
    /// - Parameters:
    ///   - adapted: The request after the adapters' first run; what the cache keys and matches `Vary` on.
    ///   - policy: The request's cache policy.
    ///   - defaultFreshness: The request's default freshness; the client's when `nil`.
    ///   - partition: The credential identity the response belongs to, or `nil` for anonymous requests.
    ///   - id: The call, for its events.
    ///   - decoding: How the caller decodes, when a fresh hit may serve (and keep) a decoded value.
    @inline(__always)
    func plan(
        _ adapted: Adapted, policy: CachePolicy, defaultFreshness: Duration? = nil, partition: String?, id: CallID,
        decoding: SharedDecoding? = nil
    ) throws(APIError) -> CachePlan {
        let request = adapted.request
        let now = configuration.currentDate()
        let freshness = defaultFreshness ?? configuration.defaultFreshness
        func send(
            _ outgoing: TransportRequest, _ record: Outgoing.Record, fallback: CachedResponse? = nil,
            nothingStored: NothingStored = .unproven
        ) -> CachePlan {
            let standIn = fallback.map { Fallback(entry: $0, atAnyAge: policy == .returnCacheWhenOffline) }
            return .send(
                Outgoing(
                    request: outgoing, record: record, fallback: standIn, requestTime: now, defaultFreshness: freshness,
                    nothingStored: nothingStored))
        }
        guard let cache = configuration.cache else {
            if policy == .onlyIfCached { throw .notCached(request.url) }
            return send(request, .nothing)
        }
        if adapted.isPrivate || request.method != .get {
            // Only a `GET` is ever answered from storage: `only-if-cached` can never be met by anything else.
            if policy == .onlyIfCached { throw .notCached(request.url) }
            let storesUnder: String?? = adapted.isPrivate ? .none : .some(partition)
            return send(request, request.method.isSafe ? .nothing : .invalidate(request, partition: storesUnder))
        }
        var nothingStored = NothingStored.unproven
        let lookup = cache.lookupNow(
            request, partition: partition, policy: policy, now: now, nothingStored: &nothingStored)
        if CacheLookup.isServable(request) { recordLookup(lookup, now: now, id: id) }
        let store = Outgoing.Record.store(lookup: request, partition: partition, validating: nil)
        switch lookup {
        case .hit(let entry):
            let served = entry.servedAt(now)
            cache.keepServed(served, beside: entry)
            return .serve(served.response, decoded: decodedHit(entry, served: served.response, as: decoding))
        case .unsatisfiable:
            throw .notCached(request.url)
        case .miss:
            return send(request, store, nothingStored: nothingStored)
        case .staleWhileRevalidate(let entry, let revalidation):
            let record = Outgoing.Record.store(lookup: request, partition: partition, validating: entry)
            let outgoing = Outgoing(
                request: revalidation, record: record, fallback: nil, requestTime: now, defaultFreshness: freshness)
            return .serveStale(entry.served(at: now), revalidation: outgoing)
        case .validate(let entry, let conditional):
            return send(conditional, .store(lookup: request, partition: partition, validating: entry), fallback: entry)
        }
    }

    /// The partition a call's response is looked up and stored under: the credential identity, and the header fields
    /// the request carries that could change the response but that the cache does not match by itself, so that
    /// `X-Tenant: acme` and `X-Tenant: globex` never share a stored response even when the server forgets
    /// `Vary: X-Tenant`. Left out: credentials (the cache partitions by them already), the fields the cache matches
    /// or obeys itself (`Accept*` and the other keyed representation fields through `Vary`, `Range`, the conditionals,
    /// `Cache-Control`, `Pragma`), and the ignored names (``APIClient/Configuration/coalescingIgnoredHeaders``).
    /// A request without header fields, the common case, is stored under the identity alone.
    func cachePartition(_ adapted: Adapted, identity: String?) -> String? {
        guard !adapted.request.headers.isEmpty else { return identity }
        return headerPartition(adapted, identity: identity)
    }

    @inline(never)  // the uncommon case stays off the call's path
    private func headerPartition(_ adapted: Adapted, identity: String?) -> String? {
        let ignored = adapted.ignoredHeaders ?? configuration.coalescingIgnoredHeaders
        let policy = adapted.request.credentials
        var lines: [(name: String, value: String)] = []
        for field in adapted.request.headers.fields {
            let name = field.canonicalName
            guard !policy.headerNames.contains(name), !ignored.contains(name), !Self.matchedByTheCache.contains(name)
            else { continue }
            lines.append((name, Self.normalizedListValue(field.value)))
        }
        guard !lines.isEmpty else { return identity }
        // By name, the values of one name in their order: the order between names never changes a request.
        let sorted = lines.enumerated().sorted {
            $0.element.name != $1.element.name ? $0.element.name < $1.element.name : $0.offset < $1.offset
        }
        // A separator no validated field contains, so that no identity and fields can spell another's.
        var partition = (identity.map { "1" + $0 } ?? "0")
        for line in sorted { partition += "\u{0}" + line.element.name + ": " + line.element.value }
        return partition
    }

    /// A field value with the whitespace around its list members dropped (`" 1, 2 "` is `"1,2"`), as `Vary` matching
    /// normalizes it (RFC 9111 §4.1): two requests a stored response's `Vary` would treat alike share its partition.
    private static func normalizedListValue(_ value: String) -> String {
        value.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .joined(separator: ",")
    }

    /// The request fields the cache matches (`Vary`) or obeys itself, so they never partition it.
    private static let matchedByTheCache: Set<String> = Set(RequestKey.standardVaryingHeaders).union([
        "cache-control", "pragma",
    ])

    /// A fresh hit's body as the caller's type: the value kept beside the stored entry, or decoded now and kept there
    /// for the next hit (so a hit decodes once per stored response, not once per call). `nil` when the caller does not
    /// share decoding (`APIRequest<Data>`, a type that is not `Sendable`) or the status is not acceptable; a value kept
    /// for another type or decoder is passed on and ignored by the caller, who then decodes its own.
    func decodedHit(_ entry: CachedResponse, served response: TransportResponse, as shared: SharedDecoding?)
        -> DecodedValue?
    {
        guard let shared, configuration.acceptableStatusCodes.contains(response.statusCode) else { return nil }
        if let kept = entry.decoded { return kept }
        let value = shared.decode(response)
        configuration.cache?.keepDecoded(value, beside: entry)
        return value
    }

    /// Step 5 when it is a plain store: stores the response and returns `true`; `false` when the answer is a `304` to
    /// merge or invalidates, which ``record(_:_:call:)`` does.
    @inline(never)
    func storeIfThatIsAll(_ exchange: Exchange, _ outgoing: borrowing Outgoing, call: Call) -> Bool {
        guard let cache = configuration.cache else { return false }
        switch outgoing.record {
        case .store(let lookup, let partition, let entry) where entry == nil || exchange.response.statusCode != 304:
            store(exchange.response, for: lookup, partition: partition, outgoing, call: call, in: cache)
            return true
        default:
            return false
        }
    }

    /// Step 5, inside the flight: what the answer changes in the cache. A `304` to the cache's own validation merges
    /// into the stored response and serves its body (``ResponseSource/revalidated``); a `GET` response is stored (or
    /// removes what it supersedes); a successful unsafe request invalidates (RFC 9111 §4.4).
    ///
    /// The common case, storing, is synchronous; the others are functions of their own
    /// (`Docs/Performance.md#async-frames`).
    @inline(never)
    nonisolated(nonsending) func record(_ exchange: Exchange, _ outgoing: Outgoing, call: Call) async throws -> Exchange
    {
        guard let cache = configuration.cache else { return exchange }
        switch outgoing.record {
        case .nothing:
            return exchange
        case .store(let lookup, let partition, let entry?) where exchange.response.statusCode == 304:
            return try await merge(
                exchange, into: entry, lookup: lookup, partition: partition, outgoing, call: call, cache: cache)
        case .store(let lookup, let partition, _):
            store(exchange.response, for: lookup, partition: partition, outgoing, call: call, in: cache)
            return exchange
        case .invalidate(let request, let partition):
            await invalidate(after: exchange.response, to: request, partition: partition, outgoing, call: call, cache)
            return exchange
        }
    }

    /// Stores a response to a `GET` (or removes the variant it supersedes) and reports what that did.
    @inline(never)
    private func store(
        _ response: TransportResponse, for lookup: TransportRequest, partition: String?, _ outgoing: Outgoing,
        call: Call, in cache: ResponseCache
    ) {
        let outcome = cache.storeCountingEvictions(
            response, for: lookup, partition: partition, requestTime: outgoing.requestTime,
            responseTime: configuration.currentDate(), defaultFreshness: outgoing.defaultFreshness)
        if let bytes = outcome.storedBytes { call.emit(.stored(bytes: bytes)) }
        if outcome.evicted > 0 { call.emit(.evicted(count: outcome.evicted)) }
    }

    /// A `304` to the cache's own validation: merged into the stored response, whose body is served. One that
    /// validates nothing the cache holds (another entity tag, or an entry removed meanwhile) would reach a caller who
    /// sent a plain `GET`: the request is sent once more without conditions instead, and that answer is recorded and
    /// returned.
    @inline(never)
    private nonisolated(nonsending) func merge(
        _ exchange: Exchange, into entry: CachedResponse, lookup: TransportRequest, partition: String?,
        _ outgoing: Outgoing, call: Call, cache: ResponseCache
    ) async throws -> Exchange {
        let responseTime = configuration.currentDate()
        guard
            let updated = await cache.revalidated(
                entry, with: exchange.response, for: lookup, partition: partition, requestTime: outgoing.requestTime,
                responseTime: responseTime)
        else {
            var resend = outgoing
            resend.request.headers.remove(name: "If-None-Match")
            resend.request.headers.remove(name: "If-Modified-Since")
            resend.record = .store(lookup: lookup, partition: partition, validating: nil)
            resend.requestTime = responseTime
            var answer = try await record(try await sendWithRetries(call, first: resend.request), resend, call: call)
            answer.attempts += exchange.attempts
            return answer
        }
        instrumentation.count(.revalidation)
        call.emit(.revalidated)
        var merged = exchange
        merged.response = updated.served(at: responseTime)
        merged.source = .revalidated
        return merged
    }

    /// A successful unsafe request removes the stored responses it makes stale; a `POST` response that names its own
    /// URL in `Content-Location` is then stored for it (unless the call is private: `partition` is then `.none`).
    @inline(never)
    private nonisolated(nonsending) func invalidate(
        after response: TransportResponse, to request: TransportRequest, partition: String??, _ outgoing: Outgoing,
        call: Call, _ cache: ResponseCache
    ) async {
        let removed = await cache.invalidate(for: request, response: response)
        if removed > 0 { call.emit(.invalidated(count: removed)) }
        guard case .some(let partition) = partition else { return }
        let stored = await cache.storeContentLocation(
            response, for: request, partition: partition, requestTime: outgoing.requestTime,
            responseTime: configuration.currentDate())
        if let bytes = stored { call.emit(.stored(bytes: bytes)) }
    }

    /// The stored response, when `stale-if-error` (RFC 5861 §4) allows serving it after a failed revalidation, or
    /// the caller asked for any stored response when the server cannot be reached
    /// (``CachePolicy/returnCacheWhenOffline``).
    @inline(never)
    func staleIfError(_ fallback: Fallback?, _ request: TransportRequest, attempts: Int = 0) -> Exchange? {
        let now = configuration.currentDate()
        guard let fallback, fallback.atAnyAge || Freshness.mayServeOnError(fallback.entry, at: now) else { return nil }
        let entry = fallback.entry
        return Exchange(request: request, response: entry.served(at: now), attempts: attempts, source: .cache)
    }
}

extension APIError {
    /// Failures after which a stale response may stand in (RFC 5861 §4): the server could not be reached or did
    /// not answer properly. Client-side mistakes do not qualify.
    var allowsStaleIfError: Bool {
        switch self {
        case .transport, .timedOut, .invalidResponse, .circuitOpen, .shed: true
        case .retryBudgetExhausted(let last): last.allowsStaleIfError || (last.response?.statusCode ?? 0) >= 500
        default: false
        }
    }
}
