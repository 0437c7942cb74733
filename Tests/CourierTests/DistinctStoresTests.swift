import Foundation
import Testing

@testable import Courier

/// Storing a URL for the first time looks its variants up once: it has none to replace or to make room among. What
/// that skips must still happen whenever the URL has variants: a response stored again replaces the one it matches,
/// and a URL keeps at most ``CacheStorage/maxVariants`` of them. A stored miss is served the next time, and what the
/// cache evicts to stay in its bounds is gone.
@Suite struct DistinctStoresTests {
    private static let date = TestDate()

    private static func request(_ key: Int, id: Int? = nil) -> TransportRequest {
        TransportRequest(
            url: URL(string: "https://api.example.com/items?key=\(key)")!,
            headers: id.map { ["X-Request-ID": "\($0)"] } ?? [:])
    }

    /// Stores a fresh response for `key`; with an `id`, one that varies on the request's `X-Request-ID`.
    @discardableResult
    private static func store(_ cache: ResponseCache, _ key: Int, id: Int? = nil, body: String = "item") async
        -> Bool
    {
        var headers: HeaderFields = ["Cache-Control": "max-age=60"]
        if id != nil { headers["Vary"] = "X-Request-ID" }
        let response = TransportResponse(statusCode: 200, headers: headers, body: Data(body.utf8))
        return await cache.store(
            response, for: request(key, id: id), partition: nil, requestTime: date.now, responseTime: date.now)
    }

    @Test func distinctURLsPastCapacityAreServedUntilEvictedOldestFirst() async throws {
        let cache = ResponseCache(maxEntries: 10)
        for key in 0..<25 {
            #expect(await Self.store(cache, key))
            // Served the next time it is asked for.
            #expect(await cache.cachedResponse(for: Self.request(key), partition: nil) != nil)
        }
        #expect(await cache.count == 10)
        #expect(await cache.isConsistent)
        for key in 0..<15 {
            #expect(await cache.cachedResponse(for: Self.request(key), partition: nil) == nil, "key \(key) was evicted")
        }
        for key in 15..<25 {
            #expect(await cache.cachedResponse(for: Self.request(key), partition: nil) != nil, "key \(key) is kept")
        }
    }

    @Test func aURLStoredAgainReplacesTheResponseItHad() async throws {
        let cache = ResponseCache()
        await Self.store(cache, 1, body: "first")
        await Self.store(cache, 2)
        await Self.store(cache, 1, body: "second")

        #expect(await cache.count == 2)
        #expect(await cache.isConsistent)
        let served = try #require(await cache.cachedResponse(for: Self.request(1), partition: nil))
        #expect(served.response.body == Data("second".utf8))
    }

    @Test func aURLWithManyVariantsStillDropsItsOldest() async throws {
        let cache = ResponseCache()
        let variants = CacheStorage.maxVariants + 3
        for id in 0..<variants {
            #expect(await Self.store(cache, 7, id: id))
        }
        await Self.store(cache, 8)

        #expect(await cache.count == CacheStorage.maxVariants + 1)
        #expect(await cache.isConsistent)
        #expect(await cache.cachedResponse(for: Self.request(7, id: variants - 1), partition: nil) != nil)
        #expect(await cache.cachedResponse(for: Self.request(7, id: 0), partition: nil) == nil)
        #expect(await cache.cachedResponse(for: Self.request(8), partition: nil) != nil)
    }
}
