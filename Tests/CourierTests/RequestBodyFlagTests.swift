import CourierTesting
import Foundation
import Testing

@testable import Courier

/// A request keeps whether it has a body beside the body (reading the optional payload copied it through the runtime),
/// and a plain `GET` is recognized by it: a body set, changed or removed after the request was made must be seen.
@Suite struct RequestBodyFlagTests {
    @Test func theFlagFollowsTheBodyThroughEveryChange() {
        var request = APIRequest<Data>.get("/items")
        #expect(!request.fields.hasBody && request.fields.isPlainGET)
        request.body = .data(Data("x".utf8), contentType: nil)
        #expect(request.fields.hasBody && !request.fields.isPlainGET)
        request.body = .json(["a": 1])
        #expect(request.fields.hasBody)
        request.body = nil
        #expect(!request.fields.hasBody && request.fields.isPlainGET)
        #expect(APIRequest<Data>(method: .get, path: "/items", body: .data(Data(), contentType: nil)).fields.hasBody)
    }

    /// A `GET` with a body set after it was made is not served the kept request of the plain `GET` of its URL: the body
    /// is sent.
    @Test func aGETWhoseBodyIsSetLaterSendsItsBody() async throws {
        let transport = StubTransport.responding(body: "ok")
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(transport: transport, cache: nil))
        // Twice, so that the URL's plain request is kept.
        _ = try await client.send(APIRequest<Data>.get("/items"))
        _ = try await client.send(APIRequest<Data>.get("/items"))
        var request = APIRequest<Data>.get("/items")
        request.body = .data(Data("payload".utf8), contentType: "text/plain")
        _ = try await client.send(request)
        let sent = transport.requests
        #expect(sent.count == 3)
        #expect(sent.last?.body == Data("payload".utf8))
    }
}
