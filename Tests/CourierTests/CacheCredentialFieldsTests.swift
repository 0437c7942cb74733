import Foundation
import Testing

@testable import Courier

/// No response field the request's credential policy names is stored, in memory or on disk: a token a server hands
/// out in `X-Auth-Token` (or a name the caller added to the policy) belongs to the caller who received it.
@Suite struct CacheCredentialFieldsTests {
    private static func request() -> TransportRequest {
        var request = TransportRequest(url: URL(string: "https://api.test/session")!)
        request.credentials.headerNames.insert("x-tenant-secret")
        return request
    }

    private static let response = TransportResponse.text(
        200, "hello",
        headers: [
            "Cache-Control": "max-age=3600", "X-Auth-Token": "tok-7f3a9", "X-Tenant-Secret": "sec-41c2",
            "Authorization": "Bearer b-93d1", "Content-Type": "text/plain",
        ])

    @Test func credentialFieldsOfAResponseNeverReachTheDisk() async throws {
        let directory = TemporaryDirectory()
        let cache = try ResponseCache(directory: directory.url)
        #expect(
            await cache.store(
                Self.response, for: Self.request(), partition: nil, requestTime: Date(), responseTime: Date()))
        let file = try Data(contentsOf: try #require(directory.entryFiles.first))
        for secret in ["tok-7f3a9", "sec-41c2", "b-93d1"] {
            #expect(file.range(of: Data(secret.utf8)) == nil, "\(secret) is not in the file")
        }
        #expect(file.range(of: Data("hello".utf8)) != nil, "the body is")
    }

    @Test func credentialFieldsOfAResponseAreNotServedFromMemory() async throws {
        let cache = ResponseCache()
        await cache.store(Self.response, for: Self.request(), partition: nil, requestTime: Date(), responseTime: Date())
        let entry = try #require(await cache.cachedResponse(for: Self.request(), partition: nil))
        #expect(entry.response.headers.map(\.name) == ["Cache-Control", "Content-Type"])
    }
}
