import Foundation
import Testing

@testable import Courier

/// A base URL with a query keeps it on every relative request, after the path and before the request's own query.
@Suite struct BaseURLTests {
    private static func sentURL(base: String, _ request: APIRequest<Void>) async throws -> String {
        let transport = MockTransport.responding()
        let client = APIClient(
            baseURL: URL(string: base)!, configuration: .init(transport: transport, cache: nil, retryPolicy: .never))
        try await client.send(request)
        return try #require(transport.requests.first?.url.absoluteString)
    }

    @Test func aBaseQueryGoesAfterThePath() async throws {
        let url = try await Self.sentURL(base: "https://h/v1?tenant=acme", .get("/users/42"))
        #expect(url == "https://h/v1/users/42?tenant=acme")
    }

    @Test(arguments: [
        ("https://h/v1?tenant=acme", "users/42", "https://h/v1/users/42?tenant=acme"),
        ("https://h/v1/?tenant=acme", "/users/42", "https://h/v1/users/42?tenant=acme"),
        ("https://h?tenant=acme", "/users", "https://h/users?tenant=acme"),
        ("https://h/v1?tenant=acme", "/search?page=2", "https://h/v1/search?tenant=acme&page=2"),
        ("https://h/v1?tenant=acme", "?page=2", "https://h/v1?tenant=acme&page=2"),
        ("https://h/v1?tenant=acme", "", "https://h/v1?tenant=acme"),
        ("https://h/v1?tenant=acme&region=eu", "/users", "https://h/v1/users?tenant=acme&region=eu"),
        ("https://h/v1?", "/users", "https://h/v1/users"),
        ("https://h/v1#top", "/users", "https://h/v1/users"),
        ("https://h/v1?tenant=acme#top", "/users", "https://h/v1/users?tenant=acme"),
        ("https://h/v1?tenant=acme", "https://other/x?y=1", "https://other/x?y=1"),
    ])
    func theQueriesAreMergedInOrder(base: String, path: String, expected: String) async throws {
        #expect(try await Self.sentURL(base: base, .get(path)) == expected)
    }

    @Test func requestQueryItemsComeLast() async throws {
        let request = APIRequest<Void>.get("/search?page=2", query: [URLQueryItem(name: "q", value: "a b")])
        let url = try await Self.sentURL(base: "https://h/v1?tenant=acme", request)
        #expect(url == "https://h/v1/search?tenant=acme&page=2&q=a%20b")
    }

    @Test func aBaseWithoutAQueryIsUnchanged() async throws {
        let request = APIRequest<Void>.get("/search?page=2", query: [URLQueryItem(name: "q", value: "x")])
        #expect(try await Self.sentURL(base: "https://h/v1/", request) == "https://h/v1/search?page=2&q=x")
    }
}
