import Foundation
import Testing

@testable import Courier

/// A stored response's fields are kept as they are in the cache's storage and boxed into an entry only when a lookup
/// first returns it (``CacheStorage/Content``): whatever reads an entry before that (a store that replaces it by
/// `Vary`, an eviction, the byte count, a scan) sees what a boxed entry would show, and the entry a lookup returns is
/// the response as stored.
@Suite struct StoredEntryBoxedOnFirstLookupTests {
    private static let url = URL(string: "https://api.test/items?key=1")!
    private static let now = Date(timeIntervalSince1970: 1_795_698_120)

    private static func response(_ body: String, vary: String? = nil) -> TransportResponse {
        var headers: HeaderFields = [
            "Date": "Thu, 26 Nov 2026 13:00:00 GMT", "Last-Modified": "Thu, 26 Nov 2026 12:00:00 GMT",
            "ETag": "\"\(body)\"", "Connection": "keep-alive", "Content-Type": "text/plain",
        ]
        if let vary { headers["Vary"] = vary }
        return TransportResponse(statusCode: 200, headers: headers, body: Data(body.utf8))
    }

    private static func request(accept: String? = nil) -> TransportRequest {
        var request = TransportRequest(url: url)
        if let accept { request.headers["Accept"] = accept }
        return request
    }

    private static func store(_ response: TransportResponse, for request: TransportRequest, in cache: ResponseCache)
        async
    {
        await cache.store(response, for: request, partition: nil, requestTime: now, responseTime: now)
    }

    @Test func theEntryALookupFirstReturnsIsTheResponseAsStored() async throws {
        let cache = ResponseCache()
        await Self.store(Self.response("one"), for: Self.request(), in: cache)
        for _ in 0..<2 {
            let entry = try #require(await cache.cachedResponse(for: Self.request(), partition: nil))
            #expect(entry.response.headers.map(\.name) == ["Date", "Last-Modified", "ETag", "Content-Type"])
            #expect(entry.body == Data("one".utf8) && entry.statusCode == 200)
            #expect(entry.etag == "\"one\"" && entry.lastModified == "Thu, 26 Nov 2026 12:00:00 GMT")
            #expect(entry.freshnessLifetime == 360 && entry.isHeuristic)
            let bytes = entry.response.headers.reduce(3) { $0 + $1.name.utf8.count + $1.value.utf8.count }
            #expect(entry.byteCount == bytes)
            #expect(entry.generation != 0 && entry.storageSlot == 0)
        }
        #expect(await cache.isConsistent)
    }

    /// A store replaces the variant its request selects, whether that variant was ever looked up or not.
    @Test func aStoreReplacesOnlyTheVariantItsRequestSelectsBoxedOrNot() async throws {
        for lookUpFirst in [false, true] {
            let cache = ResponseCache()
            await Self.store(Self.response("json", vary: "Accept"), for: Self.request(accept: "a/json"), in: cache)
            await Self.store(Self.response("text", vary: "Accept"), for: Self.request(accept: "a/text"), in: cache)
            if lookUpFirst {
                _ = await cache.cachedResponse(for: Self.request(accept: "a/json"), partition: nil)
            }
            await Self.store(Self.response("json2", vary: "Accept"), for: Self.request(accept: "a/json"), in: cache)
            #expect(await cache.count == 2)
            let json = try #require(await cache.cachedResponse(for: Self.request(accept: "a/json"), partition: nil))
            let text = try #require(await cache.cachedResponse(for: Self.request(accept: "a/text"), partition: nil))
            #expect(json.body == Data("json2".utf8) && text.body == Data("text".utf8))
            #expect(await cache.cachedResponse(for: Self.request(accept: "a/xml"), partition: nil) == nil)
            #expect(await cache.isConsistent)
        }
    }

    /// Bytes are counted from the fields as stored: evictions by size keep the totals right.
    @Test func entriesNeverLookedUpCountTheirBytesAndAreEvictedByThem() async {
        let one = CachedResponse(
            response: Self.response("one"), request: Self.request(), requestTime: Self.now,
            responseTime: Self.now
        ).byteCount
        let cache = ResponseCache(maxEntries: 100, maxBytes: 3 * one, maxEntryBytes: one)
        for key in 0..<10 {
            let request = TransportRequest(url: URL(string: "https://api.test/items?key=\(key)")!)
            await cache.store(
                Self.response("one"), for: request, partition: nil, requestTime: Self.now,
                responseTime: Self.now)
            if key == 4 { _ = await cache.cachedResponse(for: request, partition: nil) }
        }
        #expect(await cache.count == 3)
        #expect(await cache.urlsFromOldest == (7..<10).map { "https://api.test/items?key=\($0)" })
        #expect(await cache.isConsistent)
        let statistics = await cache.statistics
        #expect(statistics.stores == 10 && statistics.evictions == 7)
    }

    /// A scan of every entry (``ResponseCache/removeAll(where:)``) sees entries no lookup returned as they are.
    @Test func aScanSeesEntriesNeverLookedUp() async {
        let cache = ResponseCache()
        await Self.store(Self.response("one"), for: Self.request(), in: cache)
        let removed = await cache.removeAll { _, entry in entry.etag == "\"one\"" && entry.body == Data("one".utf8) }
        #expect(removed == 1)
        #expect(await cache.count == 0)
    }
}
