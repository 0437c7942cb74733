import Foundation
import Testing

@testable import Courier

/// Lifetimes the caller chooses (a default freshness per client and per request) and invalidation by URL, URL prefix
/// and predicate.
@Suite struct CacheLifetimeTests {
    /// A server that says nothing about caching unless told, numbering its answers.
    private static func silentServer(
        clientDefault: Duration? = nil, status: Int = 200, headers: HeaderFields = [:]
    ) -> CacheHarness {
        CacheHarness(configure: { $0.defaultFreshness = clientDefault }) { _, index, now in
            var headers = headers
            headers["Date"] = now
            return .text(status, "v\(index + 1)", headers: headers)
        }
    }

    private static func get(_ harness: CacheHarness, freshness: Duration? = nil) async throws -> APIResponse<Data> {
        var request = APIRequest<Data>.get("/r")
        request.defaultFreshness = freshness
        return try await harness.client.send(request)
    }

    @Test func theClientsDefaultFreshnessKeepsAnAnswerTheServerSaidNothingAbout() async throws {
        let harness = Self.silentServer(clientDefault: .seconds(300))
        _ = try await Self.get(harness)
        harness.date.advance(by: 299)
        #expect(try await Self.get(harness).text == "v1")
        harness.date.advance(by: 1)
        #expect(try await Self.get(harness).text == "v2")
        #expect(harness.transport.callCount == 2)
    }

    @Test func aRequestsDefaultFreshnessOverridesTheClients() async throws {
        let harness = Self.silentServer(clientDefault: .seconds(300))
        _ = try await Self.get(harness, freshness: .seconds(10))
        harness.date.advance(by: 20)
        #expect(try await Self.get(harness, freshness: .seconds(10)).text == "v2")

        let alone = Self.silentServer()
        _ = try await Self.get(alone, freshness: .seconds(60))
        alone.date.advance(by: 30)
        #expect(try await Self.get(alone).text == "v1", "the lifetime was fixed when the response was stored")
    }

    @Test(arguments: ["no-store", "no-cache", "must-revalidate", "max-age=5"])
    func theDefaultNeverOverridesWhatTheServerSaid(cacheControl: String) async throws {
        let harness = Self.silentServer(clientDefault: .seconds(300), headers: ["Cache-Control": cacheControl])
        _ = try await Self.get(harness)
        harness.date.advance(by: 10)
        #expect(try await Self.get(harness).text == "v2", "\(cacheControl) wins")
    }

    @Test func theDefaultAppliesOnlyWhereAHeuristicCould() async throws {
        let harness = Self.silentServer(clientDefault: .seconds(300), status: 500)
        _ = try await Self.get(harness)
        #expect(try await Self.get(harness).text == "v2")
        #expect(await harness.cache.count == 0)
    }

    @Test func theDefaultSurvivesA304() async throws {
        let harness = CacheHarness(configure: { $0.defaultFreshness = .seconds(60) }) { request, index, now in
            if request.headers.contains("If-None-Match") { return .text(304, headers: ["ETag": #""e""#, "Date": now]) }
            return .text(200, "v\(index + 1)", headers: ["ETag": #""e""#, "Date": now])
        }
        _ = try await harness.send()
        harness.date.advance(by: 61)
        #expect(try await harness.send().response.source == .revalidated)
        harness.date.advance(by: 30)
        #expect(try await harness.send().sent.isEmpty)
    }

    // MARK: Invalidation

    private static func filledCache() async -> ResponseCache {
        let cache = ResponseCache()
        for path in ["/v1/users/4", "/v1/users/42", "/v1/users/42/posts", "/v1/teams/7", "/v2/users/42"] {
            let request = TransportRequest(url: URL(string: "https://API.test\(path)")!)
            let headers: HeaderFields = ["Cache-Control": "max-age=60", "X-Team": path.contains("teams") ? "a" : "b"]
            await cache.store(
                .text(200, path, headers: headers), for: request, partition: nil, requestTime: TestDate.start,
                responseTime: TestDate.start)
        }
        return cache
    }

    @Test func removingByPrefixTakesEveryURLBelowIt() async {
        let cache = await Self.filledCache()
        #expect(await cache.remove(urlsWithPrefix: URL(string: "https://api.test/v1/users/42")!) == 2)
        #expect(
            await cache.urlsFromOldest == [
                "https://api.test/v1/users/4", "https://api.test/v1/teams/7",
                "https://api.test/v2/users/42",
            ])
        #expect(await cache.remove(urlsWithPrefix: URL(string: "https://api.test/v1/")!) == 2)
        #expect(await cache.count == 1)
        #expect(await cache.statistics.invalidations == 4)
        #expect(await cache.isConsistent)
    }

    @Test func removingByPredicateSeesURLAndEntry() async {
        let cache = await Self.filledCache()
        let byHeader = await cache.removeAll { _, entry in entry.response.headers["X-Team"] == "a" }
        #expect(byHeader == 1)
        let byURL = await cache.removeAll { url, _ in url.path.hasSuffix("/42") }
        #expect(byURL == 2)
        #expect(await cache.urlsFromOldest == ["https://api.test/v1/users/4", "https://api.test/v1/users/42/posts"])
        #expect(await cache.removeAll { _, _ in false } == 0)
        #expect(await cache.isConsistent)
    }
}
