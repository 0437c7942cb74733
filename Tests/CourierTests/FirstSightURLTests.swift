import CourierTesting
import Foundation
import Testing

@testable import Courier

/// A URL with query items is kept among the client's recent URLs from its second call: its first call builds the
/// request on the URL's text alone (no entry kept), so that a client calling ever-new URLs (`?key=N`) pays for
/// nothing it will not use. A URL that comes again is kept and its plain `GET` reused, as before; what a call sends
/// never depends on which happened.
@Suite(.timeLimit(.minutes(1))) struct FirstSightURLTests {
    private let base = URLBuilder.Base(URL(string: "https://api.example.com/v1?tenant=acme")!)
    private let query = [URLQueryItem(name: "key", value: "1 2")]
    private let expected = "https://api.example.com/v1/items?tenant=acme&key=1%202"

    @Test func aURLIsKeptFromItsSecondCallAndKnownFromItsThird() throws {
        let recent = RecentURLs()
        let first = try URLBuilder.resolve(base: base, path: "/items", query: query, recent: recent)
        guard case .firstSight(let text) = first else {
            Issue.record("first call: \(first)")
            return
        }
        #expect(text.text == expected)
        #expect(recent.count == 0)
        let second = try URLBuilder.resolve(base: base, path: "/items", query: query, recent: recent)
        guard case .entry(let kept, isKnown: false) = second else {
            Issue.record("second call: \(second)")
            return
        }
        #expect(recent.count == 1)
        let third = try URLBuilder.resolve(base: base, path: "/items", query: query, recent: recent)
        guard case .entry(let known, isKnown: true) = third else {
            Issue.record("third call: \(third)")
            return
        }
        #expect(known === kept)
    }

    @Test func aURLCalledAgainThroughTheClientHasItsPlainGETReused() async throws {
        let transport = StubTransport.responding(body: "ok")
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com/v1?tenant=acme")!,
            configuration: .init(transport: transport, cache: nil, retryPolicy: .never))
        for _ in 0..<4 { _ = try await client.send(APIRequest<Data>.get("/items", query: query)) }
        let sent = transport.requests
        #expect(sent.count == 4)
        #expect(sent.allSatisfy { $0.url.absoluteString == expected && $0.urlKey == expected })
        // Seen (1st), kept (2nd), its plain GET built and kept (3rd), reused (4th).
        #expect(!sent[1].sharesStorage(with: sent[0]) && !sent[2].sharesStorage(with: sent[1]))
        #expect(sent[3].sharesStorage(with: sent[2]))
        #expect(client.recentURLs.count == 1)
    }

    @Test func aFirstSightRequestIsTheRequestItsTextNames() throws {
        let text = try #require(try firstSight(path: "/items", query: [URLQueryItem(name: "api_key", value: "s3cret")]))
        let request = TransportRequest(method: .get, unparsed: text, headers: [:], body: nil, credentials: .standard)
        let parsed = try #require(URL(string: text.text))
        #expect(request.url == parsed)
        #expect(request.url.host == "api.example.com" && request.url.path == "/v1/items")
        #expect(request == TransportRequest(url: parsed))
        #expect(request.hashValue == TransportRequest(url: parsed).hashValue)
        #expect(request.urlKey == text.text)
        var changed = request
        changed.headers["Accept"] = "application/json"
        #expect(changed.url == parsed, "a copy made to change a field reads the same URL")
        changed.url = URL(string: "https://api.example.com/other")!
        #expect(changed.urlKey == "https://api.example.com/other" && request.url == parsed)
        #expect(request.description == "GET https://api.example.com/v1/items?tenant=acme&api_key=<redacted>")
        #expect(!String(reflecting: request).contains("s3cret"))
    }

    @Test func tasksReadingAFirstSightURLAtOnceAllReadTheSameURL() async throws {
        let text = try #require(try firstSight(path: "/items", query: query))
        let request = TransportRequest(method: .get, unparsed: text, headers: [:], body: nil, credentials: .standard)
        let urls = await withTaskGroup(of: URL.self) { group in
            for _ in 0..<64 { group.addTask { request.url } }
            return await group.reduce(into: [URL]()) { $0.append($1) }
        }
        #expect(urls.count == 64)
        #expect(Set(urls) == [URL(string: expected)!])
    }

    private func firstSight(path: String, query: [URLQueryItem]) throws -> URLText? {
        let target = try URLBuilder.resolve(base: base, path: path, query: query, recent: RecentURLs())
        guard case .firstSight(let text) = target else { return nil }
        return text
    }
}
