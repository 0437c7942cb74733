import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A method must be an RFC 9110 token: anything else fails with `invalidRequest` before a byte is sent, so a
/// caller's data can never rewrite the request line or smuggle a second request.
@Suite(.timeLimit(.minutes(1))) struct MethodValidationTests {
    private static let smuggling = RequestMethod("GET /first HTTP/1.1\r\nHost: h\r\n\r\nGET /x")

    private static func client(_ server: TestServer, adapters: [any RequestAdapter] = []) -> APIClient {
        APIClient(
            baseURL: server.baseURL,
            configuration: .init(
                transport: URLSessionTransport(), cache: nil, retryPolicy: .never, adapters: adapters,
                timeout: .seconds(10)))
    }

    private static func expectInvalidMethod(_ error: APIError, _ method: RequestMethod) {
        guard case .invalidRequest(.invalidMethod(let rejected)) = error else {
            Issue.record("expected invalidMethod, got \(error)")
            return
        }
        #expect(rejected == method.rawValue)
    }

    @Test func aSmugglingMethodFailsBeforeAnythingReachesTheServer() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/first") { _ in .text("first") }
        server.route("/x") { _ in .text("smuggled") }
        server.route("/users") { _ in .text("users") }
        let client = Self.client(server)

        let error = try await #require(throws: APIError.self) {
            try await client.send(APIRequest<Data>(method: Self.smuggling, path: "/users"))
        }

        Self.expectInvalidMethod(error, Self.smuggling)
        #expect(server.totalHits == 0)
        // The server was reachable all along: a valid call afterwards is its first request.
        _ = try await client.send(APIRequest<Data>.get("/users"))
        #expect(server.requests.map(\.method) == ["GET"])
        #expect(server.requests.map(\.path) == ["/users"])
        ReliabilityKit.record(
            "robustness", "request smuggling through the method (CRLF and a second request line), real sockets",
            cases: 1, outcome: "invalidRequest(invalidMethod) before sending; the server received nothing")
    }

    @Test func aMethodAnAdapterMakesInvalidFailsBeforeAnythingIsSent() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/users") { _ in .text("users") }
        let rewrite = AnyRequestAdapter { $0.method = Self.smuggling }
        let client = Self.client(server, adapters: [rewrite])

        let error = try await #require(throws: APIError.self) {
            try await client.send(APIRequest<Data>.get("/users"))
        }

        Self.expectInvalidMethod(error, Self.smuggling)
        #expect(server.totalHits == 0)
    }

    @Test(arguments: [
        "", " ", "GET ", " GET", "GE T", "GET\r\n", "GET\n", "G\u{0}T", "GÉT", "GET/", "(GET)", "\"GET\"",
    ])
    func nonTokensAreRejected(method: String) {
        let error = #expect(throws: APIError.self) { try RequestMethod(rawValue: method).validate() }
        if let error { Self.expectInvalidMethod(error, RequestMethod(rawValue: method)) }
    }

    @Test(arguments: ["GET", "POST", "PROPFIND", "M-SEARCH", "purge", "X_CUSTOM.1", "!#$%&'*+-.^_`|~"])
    func tokensAreAccepted(method: String) throws {
        try RequestMethod(rawValue: method).validate()
    }

    @Test func theDescriptionShowsAnEscapedPrefixOnly() {
        let method = "GET /x HTTP/1.1\r\nAuthorization: Bearer secret-token"
        let description = APIError.invalidRequest(.invalidMethod(method)).description
        #expect(description.contains(#""GET /x HTTP/1.1\r\nAuth"… (51 bytes)"#))
        #expect(!description.contains("secret"))
        #expect(!description.contains("\r"))
        #expect(APIError.invalidRequest(.invalidMethod("")).description.contains(#"the method "" is not a token"#))
    }
}
