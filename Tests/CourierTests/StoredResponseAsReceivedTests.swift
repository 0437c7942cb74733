import CourierTesting
import Foundation
import Testing

@testable import Courier

/// A stored entry keeps the response as received and marks the hop-by-hop fields a cache never stores; the stored
/// response is built without them whenever it is read or served: nothing the marks skip at store time ever reaches a
/// caller, the disk or the entry's size. A cookie or a credential is never held: such a response is filtered.
@Suite struct StoredResponseAsReceivedTests {
    private static let url = URL(string: "https://api.test/items?key=1")!

    /// nginx's fields with a cookie, a hop-by-hop field, a credential by the request's policy, and a URL.
    private static let received = TransportResponse(
        statusCode: 200,
        headers: [
            "Server": "nginx", "Date": "Thu, 26 Nov 2026 13:00:00 GMT", "Connection": "keep-alive",
            "Set-Cookie": "id=7", "Last-Modified": "Thu, 26 Nov 2026 12:00:00 GMT", "ETag": "\"6745f0a0-dd\"",
            "Keep-Alive": "timeout=5", "X-Auth-Token": "tok-1", "Expires": "Thu, 26 Nov 2026 14:00:00 GMT",
        ],
        body: Data("hello".utf8), url: url)

    private static let kept = ["Server", "Date", "Last-Modified", "ETag", "Expires"]

    private static func request() -> TransportRequest {
        var request = TransportRequest(url: url)
        request.credentials.headerNames.insert("x-auth-token")
        return request
    }

    private static func entry() -> CachedResponse {
        let time = Date(timeIntervalSince1970: 1_795_000_000)
        return CachedResponse(response: received, request: request(), requestTime: time, responseTime: time)
    }

    @Test func theStoredResponseLeavesOutWhatIsNeverStoredAndNamesNoURL() {
        let entry = Self.entry()
        #expect(entry.response.headers.map(\.name) == Self.kept)
        #expect(entry.response.url == nil)
        #expect(entry.response.body == Data("hello".utf8))
        #expect(entry.statusCode == 200 && entry.body == Data("hello".utf8))
        let bytes = entry.response.headers.reduce(5) { $0 + $1.name.utf8.count + $1.value.utf8.count }
        #expect(entry.byteCount == bytes)
        #expect(entry.storesField(named: "expires"))
        #expect(!entry.storesField(named: "set-cookie") && !entry.storesField(named: "x-auth-token"))
        #expect(entry.etag == "\"6745f0a0-dd\"" && entry.lastModified == "Thu, 26 Nov 2026 12:00:00 GMT")
        // The response as received is the caller's: marking fields changes nothing in it.
        #expect(Self.received.headers.count == 9 && Self.received.url == Self.url)
    }

    @Test func aServedResponseLeavesThemOutAndAddsItsAge() {
        let entry = Self.entry()
        let served = entry.served(at: entry.responseTime.addingTimeInterval(7))
        #expect(served.headers.map(\.name) == Self.kept + ["Age"])
        #expect(served.headers["Age"] == "7")
        #expect(served.url == nil)
        #expect(entry.response.headers["Age"] == nil)
    }

    @Test func aChangedResponseReplacesTheMarks() {
        var entry = Self.entry()
        var response = entry.response
        response.body = Data("hi".utf8)
        entry.response = response
        #expect(entry.response.headers.map(\.name) == Self.kept)
        #expect(entry.body == Data("hi".utf8))
    }

    /// Hop-by-hop fields alone are marked, the response kept as received; a cookie or a credential is not held.
    @Test func onlyHopByHopFieldsAreMarkedACookieOrCredentialIsNotHeld() {
        var credentials = CredentialPolicy.standard
        credentials.headerNames.insert("x-auth-token")
        let hopByHop = TransportResponse(
            statusCode: 200, headers: ["ETag": "\"a\"", "Connection": "keep-alive", "Keep-Alive": "timeout=5"])
        let marked = StoredFields.gathered(hopByHop, credentials: credentials)
        #expect(marked.removed == 0b110 && marked.received == hopByHop)
        for field in ["Set-Cookie", "X-Auth-Token"] {
            var headers = hopByHop.headers
            headers[field] = "secret"
            let gathered = StoredFields.gathered(
                TransportResponse(statusCode: 200, headers: headers), credentials: credentials)
            #expect(gathered.removed == 0)
            #expect(gathered.received.headers.map(\.name) == ["ETag"])
        }
        let entry = CachedResponse(
            response: hopByHop, request: Self.request(), requestTime: Date(), responseTime: Date())
        #expect(entry.response.headers.map(\.name) == ["ETag"])
        #expect(entry.served(at: entry.responseTime).headers.map(\.name) == ["ETag", "Age"])
    }

    @Test func aResponseWithNothingToLeaveOutIsKeptAsReceived() {
        let plain = TransportResponse(statusCode: 200, headers: ["ETag": "\"a\""], body: Data("x".utf8))
        let entry = CachedResponse(response: plain, request: Self.request(), requestTime: Date(), responseTime: Date())
        #expect(entry.response == plain)
    }

    @Test func aHitThroughTheClientServesOnlyTheStoredFields() async throws {
        let transport = StubTransport.always(
            TransportResponse(
                statusCode: 200,
                headers: [
                    "Cache-Control": "max-age=60", "Connection": "keep-alive", "Set-Cookie": "id=7",
                    "Content-Type": "text/plain",
                ],
                body: Data("hello".utf8)))
        let client = APIClient(
            baseURL: URL(string: "https://api.test")!,
            configuration: .init(transport: transport, cache: ResponseCache()))
        let miss = try await client.send(APIRequest<Data>.get("/items", query: [URLQueryItem(name: "key", value: "1")]))
        #expect(miss.source != .cache)
        #expect(miss.headers["Set-Cookie"] == "id=7" && miss.headers["Connection"] == "keep-alive")
        let hit = try await client.send(APIRequest<Data>.get("/items", query: [URLQueryItem(name: "key", value: "1")]))
        #expect(hit.source == .cache)
        #expect(hit.headers.map(\.name) == ["Cache-Control", "Content-Type", "Age"])
        #expect(hit.data == Data("hello".utf8))
    }
}
