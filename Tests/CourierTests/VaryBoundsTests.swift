import Foundation
import Testing

@testable import Courier

/// A hostile `Vary` costs a bounded amount: a response listing too many names is not stored, and a per-request `Vary`
/// keeps a bounded number of variants per URL.
@Suite struct VaryBoundsTests {
    private static let date = TestDate()

    private static func store(_ cache: ResponseCache, vary: String, requestID: Int) async -> Bool {
        let request = TransportRequest(
            url: URL(string: "https://api.example.com/feed")!, headers: ["X-Request-ID": "\(requestID)"])
        let response = TransportResponse(
            statusCode: 200, headers: ["Cache-Control": "max-age=60", "Vary": vary], body: Data("feed".utf8))
        return await cache.store(response, for: request, partition: nil, requestTime: date.now, responseTime: date.now)
    }

    @Test func aVaryOfAThousandNamesIsNotStored() async {
        let cache = ResponseCache()
        let names = (0..<1_000).map { "X-Field-\($0)" }.joined(separator: ", ")

        #expect(await Self.store(cache, vary: names, requestID: 1) == false)
        #expect(await Self.store(cache, vary: "Accept, X-Request-ID", requestID: 1) == true)
        #expect(await cache.count == 1)
    }

    @Test func aPerRequestVaryKeepsABoundedNumberOfVariants() async {
        let cache = ResponseCache()
        for id in 0..<1_000 {
            #expect(await Self.store(cache, vary: "X-Request-ID", requestID: id))
        }

        #expect(await cache.count == CacheStorage.maxVariants)
        #expect(await cache.isConsistent)
        let newest = TransportRequest(
            url: URL(string: "https://api.example.com/feed")!, headers: ["X-Request-ID": "999"])
        let oldest = TransportRequest(url: URL(string: "https://api.example.com/feed")!, headers: ["X-Request-ID": "0"])
        #expect(await cache.cachedResponse(for: newest, partition: nil) != nil)
        #expect(await cache.cachedResponse(for: oldest, partition: nil) == nil, "the oldest variants were dropped")
        ReliabilityKit.record(
            "hostile server", "Vary: X-Request-ID on 1,000 responses of one URL", cases: 1_000,
            outcome: "\(CacheStorage.maxVariants) variants kept, oldest dropped; a 1,000-name Vary is not stored")
    }
}

@Suite struct NoStorePrecheckTests {
    @Test(arguments: [
        ("no-store", false), ("max-age=60, NO-STORE", false), (#"foo="no-store", max-age=60"#, true),
        ("max-age=60", true), ("no-storex, max-age=60", true),
    ])
    func onlyANoStoreDirectiveKeepsAResponseOut(value: String, isStored: Bool) async {
        #expect(ResponseCache.mentionsNoStore(["Cache-Control": value]) == value.lowercased().contains("no-store"))
        let cache = ResponseCache()
        let request = TransportRequest(url: URL(string: "https://api.example.com/a")!)
        let response = TransportResponse(statusCode: 200, headers: ["Cache-Control": value], body: Data("x".utf8))
        let outcome = cache.storeCountingEvictions(
            response, for: request, partition: nil, requestTime: Date(), responseTime: Date())
        #expect((outcome.storedBytes != nil) == isStored)
        #expect((await cache.cachedResponse(for: request, partition: nil) != nil) == isStored)
    }

    /// What a response that is not stored does to the stored variant it supersedes: a `no-store` on either side
    /// removes it, and a status with no lifetime to use leaves it to stand in under `stale-if-error`, unless the
    /// request said `no-store`. (The store reads the response's directives before the request's.)
    @Test(arguments: [
        (500, "", "", true), (500, "", "no-store", false), (500, "no-store", "", true),
        (200, "no-store", "", false), (200, "", "no-store", false), (200, "max-age=60, no-store", "no-store", false),
    ])
    func aResponseThatIsNotStoredRemovesTheVariantOnlyUnderNoStore(
        status: Int, responseCacheControl: String, requestCacheControl: String, isKept: Bool
    ) async {
        let cache = ResponseCache()
        let url = URL(string: "https://api.example.com/a")!
        let plain = TransportRequest(url: url)
        let stored = TransportResponse(
            statusCode: 200, headers: ["Cache-Control": "max-age=60, stale-if-error=600"], body: Data("old".utf8))
        #expect(await cache.store(stored, for: plain, partition: nil, requestTime: Date(), responseTime: Date()))
        var headers: HeaderFields = [:]
        if !requestCacheControl.isEmpty { headers["Cache-Control"] = requestCacheControl }
        let request = TransportRequest(url: url, headers: headers)
        var responseHeaders: HeaderFields = [:]
        if !responseCacheControl.isEmpty { responseHeaders["Cache-Control"] = responseCacheControl }
        let response = TransportResponse(statusCode: status, headers: responseHeaders, body: Data("new".utf8))

        let outcome = cache.storeCountingEvictions(
            response, for: request, partition: nil, requestTime: Date(), responseTime: Date())

        #expect(outcome.storedBytes == nil)
        let kept = await cache.cachedResponse(for: plain, partition: nil)
        #expect((kept != nil) == isKept)
        if let kept { #expect(kept.response.body == Data("old".utf8)) }
    }

    @Test func caseInsensitiveSearchFindsLowercaseNeedles() {
        #expect("Max-Age=1, No-Store".utf8.containsIgnoringASCIICase("no-store".utf8))
        #expect(!"no-stor".utf8.containsIgnoringASCIICase("no-store".utf8))
        #expect("".utf8.containsIgnoringASCIICase("".utf8))
    }
}
