import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Redirects through `URLSessionTransport` over real sockets: a 307 or 308 keeps the method and the body
/// (RFC 9110 §15.4.8), which URLSession on Linux drops; credentials still never leave the origin.
@Suite(.timeLimit(.minutes(1))) struct TransportRedirectTests {
    private struct Order: Codable, Equatable {
        let id: Int
        let item: String
    }

    /// What `/landing` received, echoed back.
    private struct Landing: Decodable, Equatable {
        let method: String
        let body: String
        let contentType: String
    }

    private static func landingRoute(_ server: TestServer) {
        server.route("/landing") { request in
            let echo = [
                "method": request.method, "body": String(decoding: request.body, as: UTF8.self),
                "contentType": request.header("Content-Type") ?? "",
            ]
            return .json(String(decoding: try! JSONEncoder().encode(echo), as: UTF8.self))
        }
    }

    private static func client(_ server: TestServer) -> APIClient {
        APIClient(
            baseURL: server.baseURL,
            configuration: .init(transport: URLSessionTransport(), cache: nil, retryPolicy: .never, clock: TestClock()))
    }

    @Test(arguments: [307, 308], [RequestMethod.post, .put, .patch])
    func aTemporaryOrPermanentRedirectKeepsTheMethodAndTheBody(status: Int, method: RequestMethod) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/orders") { _ in .init(status: status, headers: [("Location", "/landing")]) }
        Self.landingRoute(server)
        let order = Order(id: 7, item: "tea")

        let request = APIRequest<Landing>(method: method, path: "/orders", body: .json(order))
        let response = try await Self.client(server).send(request)

        #expect(response.value.method == method.rawValue)
        #expect(try JSONDecoder().decode(Order.self, from: Data(response.value.body.utf8)) == order)
        #expect(response.value.contentType == "application/json")
        #expect(server.hits("/orders") == 1)
        #expect(server.hits("/landing") == 1)
    }

    @Test func a303StillTurnsAPostIntoAGetWithoutBody() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/orders") { _ in .init(status: 303, headers: [("Location", "/landing")]) }
        Self.landingRoute(server)

        let response = try await Self.client(server).send(APIRequest<Landing>.post("/orders", body: ["item": "tea"]))

        #expect(response.value.method == "GET")
        #expect(response.value.body.isEmpty)
    }

    @Test func a308ToAnotherOriginKeepsTheBodyButNotTheCredentials() async throws {
        let origin = try TestServer()
        let other = try TestServer()
        defer {
            origin.shutdown()
            other.shutdown()
        }
        let otherURL = other.baseURL
        origin.route("/orders") { _ in .init(status: 308, headers: [("Location", "\(otherURL)/landing")]) }
        Self.landingRoute(other)
        let headers: HeaderFields = [
            "Authorization": "Bearer secret-redirect", "Cookie": "session=secret", "X-Trace": "t-1",
        ]

        let request = APIRequest<Landing>.post("/orders", body: ["item": "tea"], headers: headers)
        let response = try await Self.client(origin).send(request)

        #expect(response.value.body == #"{"item":"tea"}"#)
        let landed = try #require(other.requests.first)
        #expect(landed.header("Authorization") == nil)
        #expect(landed.header("Cookie") == nil)
        #expect(landed.header("X-Trace") == "t-1")
        #expect(origin.requests.first?.header("Authorization") == "Bearer secret-redirect")
        ReliabilityKit.record(
            "security", "308 of a POST to another origin", cases: 1,
            outcome: "followed with method and body; Authorization and Cookie dropped")
    }

    @Test func aSessionTheTransportDidNotMakeAlsoKeepsBodiesAndDropsCredentials() async throws {
        let origin = try TestServer()
        let other = try TestServer()
        defer {
            origin.shutdown()
            other.shutdown()
        }
        let otherURL = other.baseURL
        origin.route("/orders") { _ in .init(status: 307, headers: [("Location", "\(otherURL)/landing")]) }
        origin.route("/away") { _ in .init(status: 302, headers: [("Location", "\(otherURL)/landing")]) }
        Self.landingRoute(other)
        let session = URLSession(configuration: URLSessionTransport.defaultConfiguration)
        defer { session.invalidateAndCancel() }
        let client = APIClient(
            baseURL: origin.baseURL,
            configuration: .init(
                transport: URLSessionTransport(session: session), cache: nil, retryPolicy: .never, clock: TestClock()))
        let headers: HeaderFields = ["Authorization": "Bearer secret-redirect"]

        let posted = try await client.send(APIRequest<Landing>.post("/orders", body: ["item": "tea"], headers: headers))
        let fetched = try await client.send(APIRequest<Landing>.get("/away", headers: headers))

        #expect(posted.value.body == #"{"item":"tea"}"#)
        #expect(fetched.value.method == "GET")
        #expect(other.requests.count == 2)
        #expect(other.requests.allSatisfy { $0.header("Authorization") == nil })
    }

    /// The first URL counts as visited even though the chain only starts keeping visits at the first redirect: a
    /// loop back to it through another URL fails at its repeat.
    @Test func aLoopBackToTheFirstURLFailsAtItsRepeat() throws {
        let first = try #require(URL(string: "http://127.0.0.1:1/a"))
        let second = try #require(URL(string: "http://127.0.0.1:1/b"))
        var chain = RedirectChain(policy: .default, first: first, method: "GET")

        #expect(try chain.follow(status: 302, from: first, to: second, location: "/b", method: "GET"))
        let error = #expect(throws: APIError.self) {
            try chain.follow(status: 302, from: second, to: first, location: "/a", method: "GET")
        }

        guard case .invalidResponse(let reason, nil)? = error else {
            Issue.record("expected invalidResponse, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("a redirect loop: GET http://127.0.0.1:1/a"))
    }

    /// A loop is a clear error at its first repeat; it used to be sent 21 times and end as "too many redirects".
    @Test func aLoopOf307FailsAtItsFirstRepeat() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/loop") { _ in .init(status: 307, headers: [("Location", "/loop")]) }

        let error = await #expect(throws: APIError.self) {
            try await Self.client(server).send(APIRequest<Void>.post("/loop", body: ["n": 1]))
        }

        guard case .invalidResponse(let reason, nil)? = error else {
            Issue.record("expected invalidResponse, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("a redirect loop: POST \(server.baseURL.absoluteString)/loop"))
        #expect(server.hits("/loop") == 1)
    }
}
