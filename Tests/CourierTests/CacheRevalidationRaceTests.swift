import Foundation
import Testing

@testable import Courier

private let tag = #""a""#

/// A `304` that validates nothing the cache still holds never reaches a caller who sent a plain `GET`, and never
/// overwrites what was stored or invalidated while it was on the way; a `POST` response that names its own URL in
/// `Content-Location` answers a later `GET` (RFC 9111 §4).
@Suite struct CacheRevalidationRaceTests {
    /// A server whose first answer is a stale-after-60 s `200` tagged `"a"`, whose conditional requests run
    /// `meanwhile` and get a 304 carrying `etag`, and whose plain requests get `200 v2`.
    private static func server(
        cache: ResponseCache = ResponseCache(), etag: String = tag,
        meanwhile: @escaping @Sendable (ResponseCache) async -> Void = { _ in }
    ) -> CacheHarness {
        CacheHarness(cache: cache, configure: { $0.acceptableStatusCodes = 200..<300 }) { request, index, now in
            if index == 0 {
                return .text(200, "v1", headers: ["Cache-Control": "max-age=60", "ETag": tag, "Date": now])
            }
            if request.headers.contains("If-None-Match") {
                await meanwhile(cache)
                return .text(304, headers: ["Cache-Control": "max-age=60", "ETag": etag, "Date": now])
            }
            return .text(200, "v2", headers: ["Cache-Control": "max-age=60", "ETag": #""b""#, "Date": now])
        }
    }

    @Test func a304WithAnotherETagIsAnsweredByAPlainResend() async throws {
        let harness = Self.server(etag: #""other""#)
        _ = try await harness.send()
        harness.date.advance(by: 70)
        let second = try await harness.send()
        #expect(second.sent.count == 2)
        #expect(second.sent.first?.headers["If-None-Match"] == tag)
        #expect(second.sent.last?.headers["If-None-Match"] == nil)
        #expect(second.response.statusCode == 200)
        #expect(second.response.text == "v2")
        #expect(second.response.source == .network)
    }

    @Test func a304ForAnEntryInvalidatedMeanwhileIsAnsweredByAPlainResend() async throws {
        let harness = Self.server { await $0.remove(url: URL(string: "http://api.test/r")!) }
        _ = try await harness.send()
        harness.date.advance(by: 70)
        let second = try await harness.send()
        #expect(second.sent.count == 2)
        #expect(second.response.text == "v2")
        #expect(second.response.source == .network)
        #expect(await harness.cache.cachedResponse(for: Self.get, partition: nil)?.etag == #""b""#)
    }

    @Test func a304ForAnEntryEvictedMeanwhileIsAnsweredByAPlainResend() async throws {
        let harness = Self.server { await $0.removeAll() }
        _ = try await harness.send()
        harness.date.advance(by: 70)
        let second = try await harness.send()
        #expect(second.sent.count == 2)
        #expect(second.response.text == "v2")
    }

    @Test func a304NeverOverwritesAnEntryStoredMeanwhile() async throws {
        let harness = Self.server { cache in
            let newer = TransportResponse.text(200, "v3", headers: ["Cache-Control": "max-age=600", "ETag": #""c""#])
            await cache.store(
                newer, for: Self.get, partition: nil, requestTime: TestDate.start + 70,
                responseTime: TestDate.start + 70)
        }
        _ = try await harness.send()
        harness.date.advance(by: 70)
        let second = try await harness.send()
        #expect(second.sent.count == 1)
        #expect(second.response.source == .revalidated)
        #expect(second.response.text == "v1", "the 304 validated what the request was built from")
        let stored = await harness.cache.cachedResponse(for: Self.get, partition: nil)
        #expect(stored.map { String(decoding: $0.response.body, as: UTF8.self) } == "v3")
        #expect(stored?.etag == #""c""#)
    }

    @Test func entriesCarryAGenerationThatAMergeRenews() async throws {
        let cache = ResponseCache()
        let response = TransportResponse.text(200, "v1", headers: ["Cache-Control": "max-age=60", "ETag": tag])
        await cache.store(
            response, for: Self.get, partition: nil, requestTime: TestDate.start, responseTime: TestDate.start)
        let stored = try #require(await cache.cachedResponse(for: Self.get, partition: nil))
        let merged = await cache.revalidated(
            stored, with: .text(304, headers: ["ETag": tag]), for: Self.get, partition: nil,
            requestTime: TestDate.start, responseTime: TestDate.start)
        #expect(merged != nil)
        #expect(await cache.statistics.revalidations == 1)
        let renewed = try #require(await cache.cachedResponse(for: Self.get, partition: nil))
        #expect(renewed.generation != stored.generation)
        let again = await cache.revalidated(
            stored, with: .text(304, headers: ["ETag": tag]), for: Self.get, partition: nil,
            requestTime: TestDate.start, responseTime: TestDate.start)
        #expect(again != nil, "the 304 still validates the body it was asked about")
        #expect(await cache.statistics.revalidations == 1, "but merges nothing into the newer generation")
        #expect(await cache.cachedResponse(for: Self.get, partition: nil)?.generation == renewed.generation)
    }

    // MARK: POST with Content-Location (RFC 9111 §4)

    @Test(arguments: ["/r", "http://api.test/r"])
    func aPOSTResponseNamingItsOwnURLAnswersALaterGET(contentLocation: String) async throws {
        let harness = CacheHarness { request, _, now in
            guard request.method == .post else { return .text(200, "from GET", headers: ["Date": now]) }
            return .text(
                200, "from POST",
                headers: ["Cache-Control": "max-age=60", "Content-Location": contentLocation, "Date": now])
        }
        _ = try await harness.send(method: .post)
        let later = try await harness.send()
        #expect(later.sent.isEmpty)
        #expect(later.response.text == "from POST")
    }

    @Test(arguments: [("/elsewhere", "max-age=60"), (nil, "max-age=60"), ("/r", "no-store")] as [(String?, String)])
    func otherPOSTResponsesDoNotAnswerAGET(contentLocation: String?, cacheControl: String) async throws {
        let harness = CacheHarness { request, _, now in
            guard request.method == .post else { return .text(200, "from GET", headers: ["Date": now]) }
            var headers: HeaderFields = ["Cache-Control": cacheControl, "Date": now]
            if let contentLocation { headers["Content-Location"] = contentLocation }
            return .text(200, "from POST", headers: headers)
        }
        _ = try await harness.send(method: .post)
        let later = try await harness.send()
        #expect(later.sent.count == 1)
        #expect(later.response.text == "from GET")
    }

    private static let get = TransportRequest(url: URL(string: "http://api.test/r")!)
}
