import Foundation
import Testing

@testable import Courier

/// A lookup of a URL with nothing stored (and no disk tier) is settled in its own critical section: counted there
/// as a miss, once, and answered as any lookup without an entry is, whatever the request asks. A response whose
/// `Cache-Control` says `no-store` is found by its canonical name, whatever case it came in.
@Suite struct LookupOfANewURLTests {
    private static let now = Date(timeIntervalSince1970: 1_795_698_120)

    private static func request(_ key: Int, headers: HeaderFields = [:]) -> TransportRequest {
        TransportRequest(url: URL(string: "https://api.test/items?key=\(key)")!, headers: headers)
    }

    @Test func eachLookupOfANewURLIsOneMissAnsweredAsWithoutAnEntry() async {
        let cache = ResponseCache()
        guard case .miss = await cache.lookup(Self.request(1), partition: nil, now: Self.now) else {
            Issue.record("a plain lookup of a new URL is a miss")
            return
        }
        let onlyIfCached = await cache.lookup(Self.request(2), partition: nil, policy: .onlyIfCached, now: Self.now)
        guard case .unsatisfiable = onlyIfCached else {
            Issue.record("only-if-cached with nothing stored is unsatisfiable, got \(onlyIfCached)")
            return
        }
        let directive = await cache.lookup(
            Self.request(3, headers: ["Cache-Control": "only-if-cached"]), partition: nil, now: Self.now)
        guard case .unsatisfiable = directive else {
            Issue.record("the request's only-if-cached with nothing stored is unsatisfiable, got \(directive)")
            return
        }
        let range = await cache.lookup(Self.request(4, headers: ["Range": "bytes=0-1"]), partition: nil, now: Self.now)
        guard case .miss = range else {
            Issue.record("a range of a new URL is a miss, got \(range)")
            return
        }
        #expect(await cache.statistics == ResponseCache.Statistics(hits: 0, misses: 4))
        // Stored, the same URL is a hit, counted as one.
        await cache.store(
            TransportResponse(statusCode: 200, headers: ["Cache-Control": "max-age=60"]), for: Self.request(1),
            partition: nil, requestTime: Self.now, responseTime: Self.now)
        guard case .hit = await cache.lookup(Self.request(1), partition: nil, now: Self.now) else {
            Issue.record("a stored, fresh URL is a hit")
            return
        }
        #expect(await cache.statistics == ResponseCache.Statistics(hits: 1, misses: 4, stores: 1))
    }

    @Test func noStoreInAnyCaseRemovesWhatWasStoredAndStoresNothing() async {
        let cache = ResponseCache()
        let request = Self.request(1)
        await cache.store(
            TransportResponse(statusCode: 200, headers: ["Cache-Control": "max-age=60"]), for: request,
            partition: nil, requestTime: Self.now, responseTime: Self.now)
        for name in ["CACHE-CONTROL", "Cache-Control", "cache-control"] {
            let stored = await cache.store(
                TransportResponse(
                    statusCode: 200, headers: ["Last-Modified": "Thu, 26 Nov 2026 12:00:00 GMT", name: "No-Store"]),
                for: request, partition: nil, requestTime: Self.now, responseTime: Self.now)
            #expect(!stored)
            #expect(await cache.count == 0)
        }
    }
}
