import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The redirect policy through `URLSessionTransport`, over real sockets.
@Suite(.timeLimit(.minutes(1))) struct RedirectPolicyTests {
    private static func client(
        _ server: TestServer, configure: (inout APIClient.Configuration) -> Void = { _ in }
    ) -> APIClient {
        var configuration = APIClient.Configuration(
            transport: URLSessionTransport(), cache: nil, retryPolicy: .never, clock: TestClock())
        configure(&configuration)
        return APIClient(baseURL: server.baseURL, configuration: configuration)
    }

    private static func chain(_ server: TestServer, length: Int) {
        for step in 1..<length {
            server.route("/r\(step)") { _ in .init(status: 302, headers: [("Location", "/r\(step + 1)")]) }
        }
        server.route("/r\(length)") { _ in .text("arrived") }
    }

    @Test func theResponseSaysWhereItCameFromAfterRedirects() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        Self.chain(server, length: 3)

        let response = try await Self.client(server).send(APIRequest<Data>.get("/r1"))

        #expect(response.url.absoluteString == server.baseURL.absoluteString + "/r3")
        #expect(String(decoding: response.value, as: UTF8.self) == "arrived")
        #expect(response.timings.attempts.count == 1)
    }

    @Test func theLimitStopsALongChain() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        Self.chain(server, length: 5)
        var request = APIRequest<Data>.get("/r1")
        request.redirectPolicy = .follow(limit: 2)

        let error = await #expect(throws: APIError.self) { try await Self.client(server).send(request) }

        guard case .transport(.other, let cause)? = error else {
            Issue.record("expected transport(.other), got \(String(describing: error))")
            return
        }
        #expect((cause as? URLError)?.code == .httpTooManyRedirects)
        #expect([1, 2, 3, 4].map { server.hits("/r\($0)") } == [1, 1, 1, 0])
    }

    @Test func doNotFollowReturnsTheRedirectItself() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        Self.chain(server, length: 2)
        let client = Self.client(server) { configuration in
            configuration.redirectPolicy = .doNotFollow
            configuration.acceptableStatusCodes = 200..<400
        }

        let response = try await client.send(APIRequest<Data>.get("/r1"))

        #expect(response.statusCode == 302 && response.headers["Location"] == "/r2")
        #expect(response.url.absoluteString == server.baseURL.absoluteString + "/r1")
        #expect(server.hits("/r2") == 0)
    }

    @Test func aRequestsPolicyWinsAndAClosureDecidesEachRedirect() async throws {
        let origin = try TestServer()
        let other = try TestServer()
        defer {
            origin.shutdown()
            other.shutdown()
        }
        let otherURL = other.baseURL
        origin.route("/start") { _ in .init(status: 302, headers: [("Location", "/next")]) }
        origin.route("/next") { _ in .init(status: 301, headers: [("Location", "\(otherURL)/away")]) }
        other.route("/away") { _ in .text("away") }
        let seen = Locked<[String]>([])
        let sameHostOnly = RedirectPolicy.custom { redirect in
            seen.withLock { $0.append("\(redirect.number) \(redirect.status) \(redirect.to.path) \(redirect.method)") }
            return redirect.to.port == redirect.from.port
        }
        let client = Self.client(origin) { $0.acceptableStatusCodes = 200..<400 }
        var request = APIRequest<Data>.get("/start")
        request.redirectPolicy = sameHostOnly

        let response = try await client.send(request)

        #expect(response.statusCode == 301)
        #expect(seen.withLock { $0 } == ["1 302 /next GET", "2 301 /away GET"])
        #expect(other.hits("/away") == 0)
    }

    @Test(arguments: ["http://[::1", "ftp://files.example.com/report", "mailto:ops@example.com"])
    func aLocationThatIsNotAnHTTPURLFailsClearly(location: String) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/moved") { _ in .init(status: 302, headers: [("Location", location)]) }

        let error = await #expect(throws: APIError.self) {
            try await Self.client(server).send(APIRequest<Data>.get("/moved"))
        }

        guard case .invalidResponse(let reason, nil)? = error else {
            Issue.record("expected invalidResponse, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("not an http(s) URL"))
        #expect(server.hits("/moved") == 1)
    }

    @Test func policiesCompareByKindLimitAndClosure() {
        let custom = RedirectPolicy.custom { _ in true }
        #expect(RedirectPolicy.default == .follow(limit: 20))
        #expect(RedirectPolicy.follow(limit: 3) != .follow(limit: 4))
        #expect(custom == custom && custom != .custom { _ in true })
        #expect(RedirectPolicy.follow(limit: -5).limit == 0)
    }
}
