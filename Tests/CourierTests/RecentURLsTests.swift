import Foundation
import Testing

@testable import Courier

/// A client keeps the URLs it built lately, so that calling one again skips Foundation's parse; bounded.
@Suite struct RecentURLsTests {
    private let base = URLBuilder.Base(URL(string: "https://api.example.com/v1?tenant=acme")!)

    @Test func aPathBuiltAgainIsTheSameURLKeptUnderThePath() throws {
        let recent = RecentURLs()
        let first = try URLBuilder.url(base: base, path: "/users/42", query: [], recent: recent)
        #expect(first.absoluteString == "https://api.example.com/v1/users/42?tenant=acme")
        #expect(recent.url(forPath: "/users/42")?.url == first)
        #expect(recent.url(forPath: "/users/42")?.text.text == "https://api.example.com/v1/users/42?tenant=acme")
        #expect(try URLBuilder.url(base: base, path: "/users/42", query: [], recent: recent) == first)
        #expect(recent.count == 1)
        #expect(try URLBuilder.url(base: base, path: "/users/43", query: [], recent: recent) != first)
        #expect(recent.count == 2)
    }

    @Test func aURLWithQueryItemsIsKeptUnderItsWholeText() throws {
        let recent = RecentURLs()
        let items = [URLQueryItem(name: "page", value: "2")]
        let url = try URLBuilder.url(base: base, path: "/users", query: items, recent: recent)
        #expect(url.absoluteString == "https://api.example.com/v1/users?tenant=acme&page=2")
        // Kept from its second call (see `FirstSightURLTests`).
        #expect(recent.url(forText: URLText(url.absoluteString)) == nil)
        #expect(try URLBuilder.url(base: base, path: "/users", query: items, recent: recent) == url)
        #expect(recent.url(forPath: "/users") == nil)
        #expect(recent.url(forText: URLText(url.absoluteString))?.url == url)
        let other = try URLBuilder.url(
            base: base, path: "/users", query: [URLQueryItem(name: "page", value: "3")], recent: recent)
        #expect(other.absoluteString.hasSuffix("page=3"))
    }

    @Test func aRejectedURLIsNotKept() {
        let recent = RecentURLs()
        #expect(throws: APIError.self) { try URLBuilder.url(base: base, path: "https://", query: [], recent: recent) }
        #expect(throws: APIError.self) {
            try URLBuilder.url(base: base, path: "http://[::1", query: [], recent: recent)
        }
        #expect(recent.count == 0)
    }

    @Test func everNewURLsKeepAtMostTheCapacity() async throws {
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(transport: MockTransport.responding(), cache: nil))
        var largest = 0
        for index in 0..<(RecentURLs.capacity * 2 + 7) {
            _ = try await client.send(APIRequest<Data>.get("/items/\(index)"))
            largest = max(largest, client.recentURLs.count)
        }
        #expect(largest == RecentURLs.capacity)
        // Full twice, so started over twice: the last 7 URLs are what it holds.
        #expect(client.recentURLs.count == 7)
    }
}
