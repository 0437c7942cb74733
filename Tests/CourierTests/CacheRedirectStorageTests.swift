import Foundation
import Testing

@testable import Courier

/// A response the transport reached through redirects is stored under the URL it came from, never under the URL
/// asked for: `/latest` → 302 → a file that is fresh for a year must not make `/latest` answer that file for a year.
@Suite struct CacheRedirectStorageTests {
    private static let latest = URL(string: "https://api.test/latest")!
    private static let file = URL(string: "https://api.test/files/v1.2.3")!

    private static func year(url: URL?) -> TransportResponse {
        TransportResponse(
            statusCode: 200, headers: ["Cache-Control": "max-age=31536000"], body: Data("v1.2.3".utf8), url: url)
    }

    @Test func theFinalResponseIsStoredUnderTheFinalURLOnly() async {
        let cache = ResponseCache()
        let stored = await cache.store(
            Self.year(url: Self.file), for: TransportRequest(url: Self.latest), partition: nil, requestTime: Date(),
            responseTime: Date())
        #expect(stored)
        #expect(await cache.cachedResponse(for: TransportRequest(url: Self.latest), partition: nil) == nil)
        let atFile = await cache.cachedResponse(for: TransportRequest(url: Self.file), partition: nil)
        #expect(atFile.map { String(decoding: $0.response.body, as: UTF8.self) } == "v1.2.3")
    }

    @Test func aResponseFromTheURLAskedForIsStoredAsBefore() async {
        let cache = ResponseCache()
        for url in [Self.latest, nil] {
            await cache.remove(url: Self.latest)
            await cache.store(
                Self.year(url: url), for: TransportRequest(url: Self.latest), partition: nil, requestTime: Date(),
                responseTime: Date())
            #expect(await cache.cachedResponse(for: TransportRequest(url: Self.latest), partition: nil) != nil)
        }
    }

    @Test func theClientAsksForTheRedirectingURLAgain() async throws {
        let transport = MockTransport { request, _ in
            request.url.path == "/latest" ? Self.year(url: Self.file) : Self.year(url: request.url)
        }
        let client = APIClient(
            baseURL: URL(string: "https://api.test")!,
            configuration: .init(transport: transport, cache: ResponseCache(), retryPolicy: .never))
        _ = try await client.send(APIRequest<Data>.get("/latest"))
        let again = try await client.send(APIRequest<Data>.get("/latest"))
        #expect(again.source != .cache, "the redirect may point elsewhere now")
        let direct = try await client.send(APIRequest<Data>.get("/files/v1.2.3"))
        #expect(direct.source == .cache, "the file is stored under its own URL")
        #expect(transport.callCount == 2)
    }
}
