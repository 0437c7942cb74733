import Foundation
import Testing

@testable import Courier

/// A client keeps the URLs it built lately, so that calling one again skips Foundation's parse; bounded.
@Suite struct RecentURLsTests {
    @Test func aURLBuiltAgainIsTheSameURLAndParsesOnce() throws {
        let recent = RecentURLs()
        let first = try #require(recent.url("https://api.example.com/users/42?page=2"))
        let second = try #require(recent.url("https://api.example.com/users/42?page=2"))
        #expect(first == second && first.absoluteString == "https://api.example.com/users/42?page=2")
        #expect(recent.count == 1)
        #expect(recent.url("https://api.example.com/users/43") != first)
        #expect(recent.count == 2)
    }

    @Test func textFoundationRejectsIsNotKept() {
        let recent = RecentURLs()
        #expect(recent.url("http://[::1") == nil)
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
