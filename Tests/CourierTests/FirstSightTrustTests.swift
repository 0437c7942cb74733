import CourierTesting
import Foundation
import Testing

@testable import Courier

/// A URL seen for the first time with query items is built on the base URL, so `prepare` takes it as relative
/// without scanning its path for a scheme again: an absolute URL with query items, to another origin, must still be
/// told apart on its first call and get none of the client's credentials.
@Suite(.timeLimit(.minutes(1))) struct FirstSightTrustTests {
    @Test func anAbsoluteURLWithQueryItemsToAnotherOriginGetsNoClientCredentialOnItsFirstCall() async throws {
        let transport = StubTransport.responding(body: "ok")
        var configuration = APIClient.Configuration(transport: transport, cache: ResponseCache(), retryPolicy: .never)
        configuration.headers = ["Authorization": "Bearer api-token", "User-Agent": "courier-tests"]
        let client = APIClient(baseURL: URL(string: "https://api.example.com")!, configuration: configuration)
        let query = [URLQueryItem(name: "key", value: "1")]

        _ = try await client.send(APIRequest<Data>.get("https://cdn.example.net/a", query: query))
        _ = try await client.send(APIRequest<Data>.get("/a", query: query))

        let sent = transport.requests
        try #require(sent.count == 2)
        #expect(sent[0].url.absoluteString == "https://cdn.example.net/a?key=1")
        #expect(sent[0].headers["Authorization"] == nil, "another origin gets no credential")
        #expect(sent[0].headers["User-Agent"] == "courier-tests", "other default headers still go")
        #expect(sent[1].url.absoluteString == "https://api.example.com/a?key=1")
        #expect(sent[1].headers["Authorization"] == "Bearer api-token", "a first sight on the base is trusted")
    }
}
