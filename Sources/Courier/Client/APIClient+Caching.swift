import Foundation

extension APIClient {
    /// Post-processing of a network exchange, run once per flight inside the flight (so N joiners cause one store).
    typealias Absorb = @Sendable (Exchange) async -> Exchange

    /// The flight: sends `request` (joining an identical one in flight) and passes the result through `absorb`.
    typealias Flight = @Sendable (_ request: HTTPRequest, _ absorb: @escaping Absorb) async throws -> Exchange

    /// Answers `adapted` from the cache, or runs `flight` with the request the cache decided on (possibly
    /// conditional) and records the outcome in the cache. A private call (see ``Adapted/isPrivate``) is neither
    /// answered from the cache nor stored, though an unsafe one still invalidates.
    ///
    /// - Parameters:
    ///   - adapted: The request after the adapters' first run; it is what the cache keys and matches `Vary` on.
    ///   - policy: The request's cache policy.
    ///   - partition: The credential identity the response belongs to, or `nil` for anonymous requests.
    ///   - id: The call, for its events.
    ///   - flight: Sends a request through the coalescer and applies `absorb` inside the flight.
    func withCache(
        _ adapted: Adapted, policy: CachePolicy, partition: String?, id: RequestID, flight: @escaping Flight
    ) async throws -> Exchange {
        let prepared = adapted.request
        guard let cache = configuration.cache, !adapted.isPrivate || !prepared.method.isSafe else {
            if policy == .onlyIfCached { throw APIError.notCached(prepared.url) }
            return try await flight(prepared) { $0 }
        }
        if adapted.isPrivate {
            return try await flight(prepared, absorber(cache, prepared, partition, validating: nil, id: id))
        }
        let now = configuration.currentDate()
        let lookup = await cache.lookup(prepared, partition: partition, policy: policy, now: now)
        if CacheLookup.isServable(prepared) { recordLookup(lookup, now: now, id: id) }
        switch lookup {
        case .hit(let entry):
            return Exchange(request: prepared, response: entry.served(at: now), attempts: 0, source: .cache)
        case .unsatisfiable:
            throw APIError.notCached(prepared.url)
        case .miss:
            return try await flight(prepared, absorber(cache, prepared, partition, validating: nil, id: id))
        case .staleWhileRevalidate(let entry, let revalidation):
            let absorb = absorber(cache, prepared, partition, validating: entry, id: id)
            // One refresh per stored response at a time, even with coalescing off: keyed like the cache entry.
            let key = RequestKey(
                revalidation, varyingOn: configuration.coalescingHeaders + entry.varyNames, partition: partition)
            backgroundRefreshes.run(key: key) { _ = try await flight(revalidation, absorb) }
            return Exchange(
                request: prepared, response: entry.served(at: now), attempts: 0, source: .staleWhileRevalidate)
        case .validate(let entry, let conditional):
            let absorb = absorber(cache, prepared, partition, validating: entry, id: id)
            let exchange: Exchange
            do {
                exchange = try await flight(conditional, absorb)
            } catch let error as APIError where error.allowsStaleIfError {
                guard let stale = staleIfError(entry, prepared) else { throw error }
                return stale
            }
            guard exchange.response.statusCode >= 500, var stale = staleIfError(entry, prepared) else {
                return exchange
            }
            stale.attempts = exchange.attempts
            return stale
        }
    }

    /// The stored response, when `stale-if-error` (RFC 5861 §4) allows serving it after a failed revalidation.
    private func staleIfError(_ entry: CachedResponse, _ request: HTTPRequest) -> Exchange? {
        let now = configuration.currentDate()
        guard Freshness.mayServeOnError(entry, at: now) else { return nil }
        return Exchange(request: request, response: entry.served(at: now), attempts: 0, source: .cache)
    }

    /// What happens to a network response, inside the flight: a `304` to the cache's own conditional request
    /// updates the entry and serves its body (``ResponseSource/revalidated``); a `GET` response is stored (or
    /// removes what it supersedes); a successful unsafe request invalidates (RFC 9111 §4.4).
    private func absorber(
        _ cache: ResponseCache, _ prepared: HTTPRequest, _ partition: String?, validating entry: CachedResponse?,
        id: RequestID
    ) -> Absorb {
        let requestTime = configuration.currentDate()
        let currentDate = configuration.currentDate
        return { [instrumentation] exchange in
            var exchange = exchange
            let response = exchange.response
            let responseTime = currentDate()
            guard prepared.method.isSafe else {
                let removed = await cache.invalidate(for: prepared, response: response)
                if removed > 0 { instrumentation.emit(id, .invalidated(count: removed)) }
                return exchange
            }
            guard prepared.method == .get else { return exchange }
            if response.statusCode == 304, let entry {
                guard
                    let updated = await cache.revalidated(
                        entry, with: response, for: prepared, partition: partition, requestTime: requestTime,
                        responseTime: responseTime)
                else { return exchange }
                instrumentation.count(.revalidation)
                instrumentation.emit(id, .revalidated)
                exchange.response = updated.served(at: responseTime)
                exchange.source = .revalidated
                return exchange
            }
            let outcome = await cache.storeCountingEvictions(
                response, for: prepared, partition: partition, requestTime: requestTime, responseTime: responseTime)
            if let bytes = outcome.storedBytes { instrumentation.emit(id, .stored(bytes: bytes)) }
            if outcome.evicted > 0 { instrumentation.emit(id, .evicted(count: outcome.evicted)) }
            return exchange
        }
    }
}

extension APIError {
    /// Failures after which a stale response may stand in (RFC 5861 §4): the server could not be reached or did
    /// not answer properly. Client-side mistakes do not qualify.
    var allowsStaleIfError: Bool {
        switch self {
        case .transport, .timedOut, .invalidResponse: true
        default: false
        }
    }
}
