import CourierTesting
import Foundation
import Testing

@testable import Courier

/// A URL the client builds on its base is kept as text and parsed only when something reads it as a `URL`: the cache
/// and the coalescing key read the text. Whatever reads the `URL` gets the one `URL(string:)` gives for that text.
@Suite struct UnparsedURLTests {
    private let base = URLBuilder.Base(URL(string: "https://api.example.com/v1?tenant=acme")!)

    @Test func aBuiltURLIsParsedOnlyWhenRead() throws {
        let recent = RecentURLs()
        let query = [URLQueryItem(name: "q", value: "a b")]
        // The URL's first call is not kept (see `FirstSightURLTests`); the second is.
        _ = try URLBuilder.target(base: base, path: "/users", query: query, recent: recent)
        let (entry, _) = try URLBuilder.target(base: base, path: "/users", query: query, recent: recent)
        #expect(!entry.isParsed)
        #expect(entry.text.text == "https://api.example.com/v1/users?tenant=acme&q=a%20b")
        #expect(entry.url == URL(string: "https://api.example.com/v1/users?tenant=acme&q=a%20b"))
        #expect(entry.isParsed)
        // The entry kept for the URL's next call shares the parsed URL.
        #expect(recent.url(forText: entry.text)?.isParsed == true)
    }

    /// Every byte, in a path and in a query item's name and value, as the client escapes it: the text kept unparsed
    /// is one `URL(string:)` accepts, in the normal form the cache keys by, so the URL a transport reads is the one the
    /// text names.
    @Test func everyEscapedByteParsesToTheURLOfItsText() throws {
        for byte in UInt8(0x20)...UInt8(0xFF) where byte != 0x7F && byte != UInt8(ascii: "#") {
            let character = String(decoding: [byte], as: UTF8.self)
            let path = "/a\(character)b"
            guard byte != UInt8(ascii: "%") else { continue }  // a "%" must start an escape (rejected otherwise)
            let (entry, _) = try URLBuilder.target(
                base: base, path: path, query: [URLQueryItem(name: "n\(character)", value: "v\(character)")],
                recent: nil)
            let parsed = try #require(URL(string: entry.text.text), "byte \(byte): \(entry.text.text)")
            #expect(entry.url == parsed, "byte \(byte)")
            #expect(RequestKey.normalize(entry.url) == entry.text.text, "byte \(byte)")
        }
    }

    @Test func theTransportReadsTheURLItsTextNames() async throws {
        let transport = StubTransport.responding()
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com/v1")!, configuration: .init(transport: transport, cache: nil))
        _ = try await client.send(APIRequest<Data>.get("/items", query: [URLQueryItem(name: "key", value: "1 2")]))
        let sent = try #require(transport.requests.first)
        #expect(sent.url == URL(string: "https://api.example.com/v1/items?key=1%202"))
        #expect(sent.url.host == "api.example.com")
        #expect(sent.url.path == "/v1/items")
        #expect(sent.url.query == "key=1%202")
    }

    @Test func anUnparsedURLIsRedactedInTheRequestsDescription() throws {
        let recent = RecentURLs()
        let (entry, _) = try URLBuilder.target(
            base: base, path: "/items", query: [URLQueryItem(name: "api_key", value: "s3cret")], recent: recent)
        #expect(!entry.isParsed)
        let request = TransportRequest(
            method: .get, target: entry, headers: [:], body: nil, credentials: .standard)
        #expect(request.description == "GET https://api.example.com/v1/items?tenant=acme&api_key=<redacted>")
        #expect(!String(describing: request).contains("s3cret"))
        #expect(!String(reflecting: request).contains("s3cret"))
    }

    @Test func aRequestOnAnUnparsedURLEqualsOneOnTheParsedURL() throws {
        let (entry, _) = try URLBuilder.target(
            base: base, path: "/items", query: [URLQueryItem(name: "page", value: "2")], recent: nil)
        let unparsed = TransportRequest(method: .get, target: entry, headers: [:], body: nil, credentials: .standard)
        let parsed = TransportRequest(url: URL(string: entry.text.text)!)
        #expect(unparsed == parsed)
        #expect(unparsed.hashValue == parsed.hashValue)
        #expect(unparsed.urlKey == parsed.urlKey)
        var elsewhere = unparsed
        elsewhere.url = URL(string: "https://api.example.com/other")!
        #expect(elsewhere != parsed)
        #expect(elsewhere.urlKey == "https://api.example.com/other", "a changed URL is keyed by its own text")
    }
}
