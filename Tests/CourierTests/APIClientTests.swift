import Foundation
import Testing

@testable import Courier

private struct User: Codable, Equatable, Sendable {
    let id: Int
    let name: String
}

private func makeClient(
    _ transport: MockTransport, base: String = "https://api.example.com/v1",
    configure: (inout APIClient.Configuration) -> Void = { _ in }
) -> APIClient {
    var configuration = APIClient.Configuration(transport: transport, retryPolicy: .never)
    configure(&configuration)
    return APIClient(baseURL: URL(string: base)!, configuration: configuration)
}

@Suite struct APIClientTests {
    // MARK: Decoding

    @Test func decodesJSONIntoTheRequestedType() async throws {
        let client = makeClient(.json(#"{"id":7,"name":"Ada"}"#))
        let response = try await client.send(APIRequest<User>.get("/users/7"))
        #expect(response.value == User(id: 7, name: "Ada"))
        #expect(response.statusCode == 200)
        #expect(response.source == .network)
        #expect(response.joined == false)
        #expect(response.attempts == 1)
        #expect(response.url.absoluteString == "https://api.example.com/v1/users/7")
    }

    @Test func dataRequestsReturnTheRawBytes() async throws {
        let bytes = Data([0, 1, 2, 255])
        let client = makeClient(MockTransport { _, _ in TransportResponse(statusCode: 200, body: bytes) })
        let response = try await client.send(APIRequest<Data>.get("/blob"))
        #expect(response.value == bytes)
    }

    @Test func voidRequestsAcceptAnEmptyBody() async throws {
        let client = makeClient(.responding(status: 204))
        let response = try await client.send(APIRequest<Void>.delete("/users/7"))
        #expect(response.statusCode == 204)
        #expect(response.data.isEmpty)
    }

    @Test func aBodyThatDoesNotDecodeIsAClearError() async throws {
        let client = makeClient(.json(#"{"id":"seven"}"#))
        let error = try await #require(throws: APIError.self) { try await client.send(APIRequest<User>.get("/u")) }
        guard case .decodingFailed(let type, _, let response) = error else {
            Issue.record("expected decodingFailed, got \(error)")
            return
        }
        #expect(type == "User")
        #expect(response.body == Data(#"{"id":"seven"}"#.utf8))
    }

    @Test func anEmptyBodyForADecodableTypeIsADecodingError() async throws {
        let client = makeClient(.responding(status: 200))
        let error = try await #require(throws: APIError.self) { try await client.send(APIRequest<User>.get("/u")) }
        #expect(error.underlyingError is DecodingError)
    }

    // MARK: Status validation

    @Test func aNon2xxStatusFailsWithTheStatusAndBody() async throws {
        let client = makeClient(.responding(status: 404, body: #"{"error":"no such user"}"#))
        let error = try await #require(throws: APIError.self) { try await client.send(APIRequest<User>.get("/u/9")) }
        #expect(error.statusCode == 404)
        #expect(error.response?.body == Data(#"{"error":"no such user"}"#.utf8))
        #expect(error.description.contains("404"))
        // The body may echo a secret: the description counts it, the response carries it.
        #expect(error.description.contains("24 bytes"))
        #expect(!error.description.contains("no such user"))
    }

    @Test func acceptableStatusCodesAreConfigurable() async throws {
        let client = makeClient(.responding(status: 304)) { $0.acceptableStatusCodes = 200..<400 }
        let response = try await client.send(APIRequest<Void>.get("/cached"))
        #expect(response.statusCode == 304)
    }

    // MARK: Building the request

    @Test(arguments: [
        ("https://api.example.com/v1", "/users", "https://api.example.com/v1/users"),
        ("https://api.example.com/v1/", "/users", "https://api.example.com/v1/users"),
        ("https://api.example.com/v1", "users", "https://api.example.com/v1/users"),
        ("https://api.example.com", "", "https://api.example.com"),
        ("https://api.example.com", "/search?q=swift", "https://api.example.com/search?q=swift"),
        ("https://api.example.com", "/caf\u{E9} au lait", "https://api.example.com/caf%C3%A9%20au%20lait"),
        ("https://api.example.com", "/a%2Fb", "https://api.example.com/a%2Fb"),
        ("https://api.example.com/v1", "https://cdn.example.com/x.png", "https://cdn.example.com/x.png"),
        ("https://api.example.com/v1", "HTTP://cdn.example.com/x", "HTTP://cdn.example.com/x"),
    ])
    func buildsURLs(base: String, path: String, expected: String) async throws {
        let transport = MockTransport.responding()
        let client = makeClient(transport, base: base)
        try await client.send(APIRequest<Void>.get(path))
        #expect(transport.requests.first?.url.absoluteString == expected)
    }

    @Test func queryItemsAreEncodedPerRFC3986() async throws {
        let transport = MockTransport.responding()
        let client = makeClient(transport, base: "https://api.example.com")
        let query = [
            URLQueryItem(name: "q", value: "a+b=c&d e/é"), URLQueryItem(name: "flag", value: nil),
            URLQueryItem(name: "safe", value: "A-z_0.9~"),
        ]
        try await client.send(APIRequest<Void>.get("/search?page=2", query: query))
        let url = try #require(transport.requests.first?.url.absoluteString)
        #expect(url == "https://api.example.com/search?page=2&q=a%2Bb%3Dc%26d%20e%2F%C3%A9&flag&safe=A-z_0.9~")
    }

    @Test func headersMergeWithClientDefaultsAndRequestWins() async throws {
        let transport = MockTransport.responding()
        let client = makeClient(transport) { $0.headers = ["User-Agent": "courier-tests", "Accept": "text/plain"] }
        try await client.send(APIRequest<Void>.get("/", headers: ["accept": "application/json"]))
        let sent = try #require(transport.requests.first)
        #expect(sent.headers.values(for: "Accept") == ["application/json"])
        #expect(sent.headers["user-agent"] == "courier-tests")
    }

    @Test func everyLineOfARepeatedDefaultHeaderIsSent() async throws {
        let transport = MockTransport.responding()
        let client = makeClient(transport) {
            $0.headers = HeaderFields([("Accept", "application/json"), ("Accept", "text/plain;q=0.5"), ("X-A", "1")])
        }
        try await client.send(APIRequest<Void>.get("/"))
        try await client.send(APIRequest<Void>.get("/", headers: ["accept": "text/csv"]))
        let sent = transport.requests.map { $0.headers.values(for: "Accept") }
        #expect(sent == [["application/json", "text/plain;q=0.5"], ["text/csv"]])
    }

    @Test func fieldsAddedAfterReservingKeepTheirOrderAndNames() {
        var headers: HeaderFields = ["Accept": "application/json"]
        headers.reserveCapacity(3)
        headers.add(name: "Set-Cookie", value: "a=1")
        headers.add(name: "set-cookie", value: "b=2")
        #expect(headers.map(\.name) == ["Accept", "Set-Cookie", "set-cookie"])
        #expect(headers.values(for: "SET-COOKIE") == ["a=1", "b=2"])
        #expect(
            headers == HeaderFields([("accept", "application/json"), ("set-cookie", "a=1"), ("Set-Cookie", "b=2")]))
    }

    @Test func encodableBodiesAreSentAsJSON() async throws {
        let transport = MockTransport.responding(status: 201)
        let client = makeClient(transport)
        try await client.send(APIRequest<Void>.post("/users", body: User(id: 1, name: "Ada")))
        let sent = try #require(transport.requests.first)
        #expect(sent.method == .post)
        #expect(sent.headers["Content-Type"] == "application/json")
        #expect(try JSONDecoder().decode(User.self, from: sent.body ?? Data()) == User(id: 1, name: "Ada"))
    }

    @Test func dataBodiesAreSentAsTheyAre() async throws {
        let transport = MockTransport.responding()
        let client = makeClient(transport)
        try await client.send(APIRequest<Void>.put("/blob", body: Data([1, 2, 3])))
        #expect(transport.requests.first?.body == Data([1, 2, 3]))
        #expect(transport.requests.first?.headers["Content-Type"] == nil)
    }

    // MARK: Bad input fails before anything is sent

    @Test(arguments: [
        ("/users\n/evil", "control character"),
        ("/users#top", "fragment"),
        ("/100%", "escape"),
        ("/bad%zzescape", "escape"),
        ("ftp://files.example.com/x", "not a valid"),
        ("https://", "not a valid"),
        ("http:// spaces.example.com/", "not a valid"),
    ])
    func malformedPathsAreRejected(path: String, phrase: String) async throws {
        let transport = MockTransport.responding()
        let client = makeClient(transport)
        let error = try await #require(throws: APIError.self) { try await client.send(APIRequest<Void>.get(path)) }
        guard case .invalidRequest = error else {
            Issue.record("expected invalidRequest, got \(error)")
            return
        }
        #expect(error.description.contains(phrase))
        #expect(transport.callCount == 0)
    }

    @Test(
        arguments: [
            ["Bad Name": "x"], ["": "x"], ["X-Ok": "line\r\nInjected: 1"], ["X-Ok": "nul\u{0}byte"], ["Caf\u{E9}": "x"],
        ] as [HeaderFields])
    func malformedHeadersAreRejected(headers: HeaderFields) async throws {
        let transport = MockTransport.responding()
        let client = makeClient(transport)
        let error = try await #require(throws: APIError.self) {
            try await client.send(APIRequest<Void>.get("/", headers: headers))
        }
        guard case .invalidRequest(let reason) = error else {
            Issue.record("expected invalidRequest, got \(error)")
            return
        }
        switch reason {
        case .invalidHeaderName, .invalidHeaderValue: break
        default: Issue.record("unexpected reason \(reason)")
        }
        #expect(transport.callCount == 0)
    }

    @Test func aHeaderValueErrorDoesNotPrintTheValue() async throws {
        let client = makeClient(.responding())
        let error = try await #require(throws: APIError.self) {
            try await client.send(APIRequest<Void>.get("/", headers: ["Authorization": "Bearer s3cret\n"]))
        }
        #expect(!error.description.contains("s3cret"))
        #expect(error.description.contains("Authorization"))
    }

    @Test func anUnencodableBodyFailsBeforeSending() async throws {
        let transport = MockTransport.responding()
        let client = makeClient(transport)
        let error = try await #require(throws: APIError.self) {
            try await client.send(APIRequest<Void>.post("/numbers", body: [Double.nan]))
        }
        guard case .encodingFailed(let cause) = error else {
            Issue.record("expected encodingFailed, got \(error)")
            return
        }
        #expect(cause is EncodingError)
        #expect(transport.callCount == 0)
    }

    // MARK: Adapters

    @Test func adaptersRunInOrderOnEveryAttempt() async throws {
        let transport = MockTransport.sequence([.success(.text(503)), .success(.text(200))])
        let counter = Locked(0)
        let client = makeClient(transport) { configuration in
            configuration.retryPolicy = RetryPolicy(baseDelay: .zero, jitter: .none)
            configuration.adapters = [
                AnyRequestAdapter { request in
                    let n = counter.withLock { value in
                        value += 1
                        return value
                    }
                    request.headers["X-Attempt"] = "\(n)"
                },
                AnyRequestAdapter { request in request.headers["X-Seen"] = request.headers["X-Attempt"] },
            ]
        }
        let response = try await client.send(APIRequest<Void>.get("/"))
        #expect(response.attempts == 2)
        #expect(transport.requests.map { $0.headers["X-Attempt"] } == ["1", "2"])
        #expect(transport.requests.map { $0.headers["X-Seen"] } == ["1", "2"])
    }

    @Test func anAdapterThatThrowsFailsTheCall() async throws {
        struct Refused: Error {}
        let transport = MockTransport.responding()
        let client = makeClient(transport) { $0.adapters = [AnyRequestAdapter { _ in throw Refused() }] }
        let error = try await #require(throws: APIError.self) { try await client.send(APIRequest<Void>.get("/")) }
        #expect(error.underlyingError is Refused)
        #expect(transport.callCount == 0)
    }

    @Test func anAdapterCannotSmuggleABadHeader() async throws {
        let transport = MockTransport.responding()
        let client = makeClient(transport) {
            $0.adapters = [AnyRequestAdapter { request in request.headers["X-Evil"] = "a\r\nb: c" }]
        }
        await #expect(throws: APIError.self) { try await client.send(APIRequest<Void>.get("/")) }
        #expect(transport.callCount == 0)
    }

    // MARK: Transport errors

    @Test func foreignTransportErrorsAreWrappedWithTheirCause() async throws {
        struct Boom: Error {}
        let client = makeClient(MockTransport { _, _ in throw Boom() })
        let error = try await #require(throws: APIError.self) { try await client.send(APIRequest<Void>.get("/")) }
        guard case .transport(.other, let cause) = error else {
            Issue.record("expected transport(.other), got \(error)")
            return
        }
        #expect(cause is Boom)
    }
}
