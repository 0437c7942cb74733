import Foundation
import Testing

@testable import Courier

private let start = TestDate.start

private func get(_ path: String, _ headers: HeaderFields = [:]) -> TransportRequest {
    TransportRequest(url: URL(string: "https://api.test\(path)")!, headers: headers)
}

private func ok(_ body: String, _ headers: HeaderFields = ["Cache-Control": "max-age=60"]) -> TransportResponse {
    TransportResponse(statusCode: 200, headers: headers, body: Data(body.utf8))
}

extension ResponseCache {
    /// Stores at `TestDate.start`, anonymously.
    @discardableResult
    fileprivate func put(_ response: TransportResponse, _ request: TransportRequest, partition: String? = nil) async
        -> Bool
    {
        await store(response, for: request, partition: partition, requestTime: start, responseTime: start)
    }

    fileprivate func body(_ request: TransportRequest, partition: String? = nil) async -> String? {
        await cachedResponse(for: request, partition: partition).map {
            String(decoding: $0.response.body, as: UTF8.self)
        }
    }
}

@Suite struct ResponseCacheTests {
    // MARK: LRU and Bytes

    @Test func evictionFollowsLeastRecentUse() async {
        let cache = ResponseCache(maxEntries: 3)
        for path in ["/a", "/b", "/c"] { await cache.put(ok(path), get(path)) }
        #expect(await cache.body(get("/a")) == "/a")  // /a becomes the most recently used
        await cache.put(ok("/d"), get("/d"))
        #expect(await cache.urlsFromOldest == ["https://api.test/c", "https://api.test/a", "https://api.test/d"])
        #expect(await cache.count == 3)
        #expect(await cache.statistics.evictions == 1)
        #expect(await cache.body(get("/b")) == nil)
        await cache.put(ok("/e"), get("/e"))
        await cache.put(ok("/f"), get("/f"))
        #expect(await cache.urlsFromOldest == ["https://api.test/d", "https://api.test/e", "https://api.test/f"])
        #expect(await cache.statistics.evictions == 3)
        #expect(await cache.isConsistent)
    }

    @Test func aHitOnTheNewestEntryLeavesTheOrderAndAHitOnAnotherMovesIt() async {
        let cache = ResponseCache(maxEntries: 3)
        for path in ["/a", "/b", "/c"] { await cache.put(ok(path), get(path)) }
        for _ in 0..<3 { #expect(await cache.body(get("/c")) == "/c") }
        #expect(await cache.urlsFromOldest == ["https://api.test/a", "https://api.test/b", "https://api.test/c"])
        #expect(await cache.body(get("/b")) == "/b")
        #expect(await cache.urlsFromOldest == ["https://api.test/a", "https://api.test/c", "https://api.test/b"])
        #expect(await cache.isConsistent)
    }

    @Test func bytesAreCountedExactly() async {
        let headers: HeaderFields = ["Cache-Control": "max-age=60", "ETag": #""x""#]
        let response = ok(String(repeating: "z", count: 100), headers)
        // Σ (name + value) over header fields + body: (13 + 10) + (4 + 3) + 100.
        let expected = 13 + 10 + 4 + 3 + 100
        let entry = CachedResponse(response: response, request: get("/a"), requestTime: start, responseTime: start)
        #expect(entry.byteCount == expected)

        let cache = ResponseCache(maxEntries: 100, maxBytes: 2 * expected + 10)
        await cache.put(response, get("/a"))
        await cache.put(response, get("/b"))
        #expect(await cache.totalBytes == 2 * expected)
        await cache.put(response, get("/c"))  // over the byte limit: /a goes
        #expect(await cache.totalBytes == 2 * expected)
        #expect(await cache.urlsFromOldest == ["https://api.test/b", "https://api.test/c"])
        await cache.put(ok("tiny", ["Cache-Control": "max-age=1"]), get("/c"))  // replacing shrinks the total
        #expect(await cache.totalBytes == expected + (13 + 9 + 4))
        await cache.remove(url: URL(string: "https://api.test/b")!)
        #expect(await cache.totalBytes == 13 + 9 + 4)
        await cache.removeAll()
        #expect(await cache.totalBytes == 0)
        #expect(await cache.count == 0)
        #expect(await cache.isConsistent)
    }

    @Test func hopByHopFieldsAreNotStoredOrCounted() async {
        let response = ok(
            "b", ["Cache-Control": "max-age=5", "Connection": "X-Hop", "X-Hop": "1", "Keep-Alive": "t=5"])
        let entry = CachedResponse(response: response, request: get("/a"), requestTime: start, responseTime: start)
        #expect(entry.response.headers.count == 1)
        #expect(entry.byteCount == 13 + 9 + 1)
    }

    @Test func oneEntryOverTheLimitIsNotStoredAndDropsTheOldOne() async {
        let cache = ResponseCache(maxEntries: 10, maxBytes: 1_000, maxEntryBytes: 100)
        #expect(await cache.put(ok("small"), get("/a")))
        #expect(!(await cache.put(ok(String(repeating: "x", count: 200)), get("/a"))))
        #expect(await cache.count == 0)
        #expect(await cache.totalBytes == 0)
        #expect(cache.maxEntryBytes == 100)
        #expect(ResponseCache(maxBytes: 50, maxEntryBytes: 500).maxEntryBytes == 50)
    }

    @Test func countLimitOfZeroStoresNothing() async {
        let cache = ResponseCache(maxEntries: 0)
        #expect(!(await cache.put(ok("a"), get("/a"))))
        #expect(await cache.count == 0)
    }

    // MARK: Keys

    @Test func varyKeepsOneVariantPerHeaderValue() async {
        let cache = ResponseCache()
        let vary: HeaderFields = ["Cache-Control": "max-age=60", "Vary": "Accept"]
        await cache.put(ok("json", vary), get("/a", ["Accept": "application/json"]))
        await cache.put(ok("csv", vary), get("/a", ["Accept": "text/csv"]))
        await cache.put(ok("json2", vary), get("/a", ["Accept": "application/json"]))  // replaces its variant
        #expect(await cache.count == 2)
        #expect(await cache.body(get("/a", ["Accept": "application/json"])) == "json2")
        #expect(await cache.body(get("/a", ["accept": "text/csv"])) == "csv")
        #expect(await cache.body(get("/a")) == nil)
        await cache.remove(url: URL(string: "https://API.test:443/a")!)
        #expect(await cache.count == 0)
    }

    @Test func varyStarIsNeverStored() async {
        let cache = ResponseCache()
        #expect(!(await cache.put(ok("x", ["Cache-Control": "max-age=60", "Vary": "Accept, *"]), get("/a"))))
    }

    @Test func partitionsAndCredentialsNeverShare() async {
        let cache = ResponseCache()
        await cache.put(ok("alice"), get("/me"), partition: "alice")
        await cache.put(ok("bob"), get("/me"), partition: "bob")
        await cache.put(ok("carol"), get("/me", ["Authorization": "Bearer carol"]))
        #expect(await cache.body(get("/me"), partition: "alice") == "alice")
        #expect(await cache.body(get("/me"), partition: "bob") == "bob")
        #expect(await cache.body(get("/me")) == nil)
        #expect(await cache.body(get("/me", ["Authorization": "Bearer carol"])) == "carol")
        #expect(await cache.body(get("/me", ["Authorization": "Bearer dave"])) == nil)
        let removed = await cache.invalidate(
            for: TransportRequest(method: .put, url: URL(string: "https://api.test/me")!),
            response: TransportResponse(statusCode: 204))
        #expect(removed == 3)
        #expect(await cache.statistics.invalidations == 3)
    }

    @Test func onlyGetIsStored() async {
        let cache = ResponseCache()
        let post = TransportRequest(method: .post, url: URL(string: "https://api.test/a")!)
        #expect(!(await cache.store(ok("x"), for: post, partition: nil, requestTime: start, responseTime: start)))
        let lookup = await cache.lookup(post, partition: nil, now: start)
        guard case .miss = lookup else {
            Issue.record("expected a miss, got \(lookup)")
            return
        }
    }

    @Test func statisticsCountHitsMissesStoresAndRevalidations() async {
        let cache = ResponseCache()
        let request = get("/a")
        _ = await cache.lookup(request, partition: nil, now: start)
        await cache.put(ok("x", ["Cache-Control": "max-age=60", "ETag": #""1""#]), request)
        _ = await cache.lookup(request, partition: nil, now: start + 10)
        guard case .validate(let entry, let conditional) = await cache.lookup(request, partition: nil, now: start + 100)
        else {
            Issue.record("expected validation")
            return
        }
        #expect(conditional.headers["If-None-Match"] == #""1""#)
        let updated = await cache.revalidated(
            entry, with: TransportResponse(statusCode: 304, headers: ["Cache-Control": "max-age=600"]), for: request,
            partition: nil, requestTime: start + 100, responseTime: start + 100)
        #expect(updated?.response.headers["Cache-Control"] == "max-age=600")
        #expect(updated?.isFresh(at: start + 200) == true)
        #expect(
            await cache.statistics
                == ResponseCache.Statistics(hits: 1, misses: 2, stores: 2, evictions: 0, revalidations: 1))
    }

    // MARK: Concurrency

    @Test func tenThousandConcurrentLookupsAndStoresKeepTheInvariants() async {
        let cache = ResponseCache(maxEntries: 64, maxBytes: 64 * 200)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<10_000 {
                group.addTask {
                    let request = get("/item/\(index % 97)", ["Accept": index % 3 == 0 ? "a" : "b"])
                    if index.isMultiple(of: 2) {
                        let headers: HeaderFields = ["Cache-Control": "max-age=60", "Vary": "Accept"]
                        await cache.store(
                            ok(String(repeating: "x", count: index % 150), headers), for: request,
                            partition: index % 5 == 0 ? "user" : nil, requestTime: start, responseTime: start)
                    } else {
                        _ = await cache.lookup(request, partition: nil, now: start + 1)
                    }
                }
            }
        }
        let statistics = await cache.statistics
        #expect(statistics.hits + statistics.misses == 5_000)
        #expect(statistics.stores == 5_000)
        #expect(await cache.count <= 64)
        #expect(await cache.totalBytes <= 64 * 200)
        #expect(await cache.isConsistent)
    }

    @Test func aLongRandomSequenceKeepsTheInvariants() async {
        let cache = ResponseCache(maxEntries: 8, maxBytes: 600, maxEntryBytes: 200)
        var generator = SplitMix(seed: 42)
        for _ in 0..<3_000 {
            let path = "/p/\(generator.next() % 20)"
            switch generator.next() % 4 {
            case 0, 1:
                let size = Int(generator.next() % 250)
                await cache.put(
                    ok(String(repeating: "y", count: size)), get(path), partition: "\(generator.next() % 2)")
            case 2: _ = await cache.cachedResponse(for: get(path), partition: "1")
            default: await cache.remove(url: get(path).url)
            }
        }
        #expect(await cache.isConsistent)
        #expect(await cache.count <= 8)
        #expect(await cache.totalBytes <= 600)
    }
}

/// A tiny deterministic generator, so the random sequence is the same on every run.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
