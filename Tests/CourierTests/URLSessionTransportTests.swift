import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private struct Item: Codable, Equatable {
    let id: Int
    let name: String
}

/// A client over a real URLSessionTransport pointed at a TestServer on loopback.
private func makeClient(
    _ server: TestServer, clock: TestClock = TestClock(), retryPolicy: RetryPolicy = RetryPolicy(jitter: .none)
) -> APIClient {
    APIClient(
        baseURL: server.baseURL,
        configuration: .init(transport: URLSessionTransport(), retryPolicy: retryPolicy, clock: clock))
}

@Suite(.timeLimit(.minutes(1))) struct URLSessionTransportTests {
    @Test func aGetRoundTripsOverRealSockets() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("GET", "/items/1") { request in
            .json(#"{"id":1,"name":"\#(request.header("X-Client") ?? "?")"}"#, headers: [("X-Trace", "t-1")])
        }
        let client = makeClient(server)
        let response = try await client.send(APIRequest<Item>.get("/items/1", headers: ["X-Client": "courier"]))
        #expect(response.value == Item(id: 1, name: "courier"))
        #expect(response.statusCode == 200)
        #expect(response.headers["x-trace"] == "t-1")
        #expect(response.attempts == 1)
    }

    @Test func a404IsAnAPIErrorWithStatusAndBody() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/missing") { _ in .json(#"{"error":"not here"}"#, status: 404) }
        let client = makeClient(server)
        let error = try await #require(throws: APIError.self) {
            try await client.send(APIRequest<Item>.get("/missing"))
        }
        #expect(error.statusCode == 404)
        #expect(error.response?.body == Data(#"{"error":"not here"}"#.utf8))
        #expect(server.hits("/missing") == 1)
    }

    @Test func twoServiceUnavailableThenSuccessTakesThreeAttempts() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let calls = Locked(0)
        server.route("/flaky") { _ in
            let call = calls.withLock { count in
                count += 1
                return count
            }
            return call < 3 ? .text("busy", status: 503) : .json(#"{"id":3,"name":"ok"}"#)
        }
        let clock = TestClock()
        let client = makeClient(server, clock: clock)
        let response = Task { try await client.send(APIRequest<Item>.get("/flaky")) }
        await clock.waitForSleeper(of: .milliseconds(500))
        clock.advance(by: .milliseconds(500))
        await clock.waitForSleeper(of: .seconds(1))
        clock.advance(by: .seconds(1))
        let result = try await response.value
        #expect(result.attempts == 3)
        #expect(result.value == Item(id: 3, name: "ok"))
        #expect(server.hits("/flaky") == 3)
    }

    @Test func retryAfterFromTheServerIsHonouredOnTheClock() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let calls = Locked(0)
        server.route("/limited") { _ in
            let first = calls.withLock { count in
                count += 1
                return count == 1
            }
            return first ? .text("slow down", status: 429, headers: [("Retry-After", "4")]) : .text("ok")
        }
        let clock = TestClock()
        let client = makeClient(server, clock: clock)
        let response = Task { try await client.send(APIRequest<Data>.get("/limited")) }
        await clock.waitForSleeper(of: .seconds(4))
        #expect(server.hits("/limited") == 1)
        clock.advance(by: .seconds(4))
        #expect(try await response.value.value == Data("ok".utf8))
        #expect(server.hits("/limited") == 2)
    }

    @Test func aPostIsNotRetried() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("POST", "/orders") { _ in .text("down", status: 503) }
        let client = makeClient(server)
        let error = try await #require(throws: APIError.self) {
            try await client.send(APIRequest<Void>.post("/orders", body: Item(id: 1, name: "x")))
        }
        #expect(error.statusCode == 503)
        #expect(server.hits("/orders") == 1)
        let sent = try #require(server.requests.first?.body)
        #expect(try JSONDecoder().decode(Item.self, from: sent) == Item(id: 1, name: "x"))
    }

    @Test func aQuarterSecondDeadlineBeatsATwoSecondRoute() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/slow") { _ in
            // The handler is cancelled when the client hangs up, so this never holds the test for 2 s.
            try? await Task.sleep(for: .seconds(2))
            return .text("late")
        }
        let clock = TestClock()
        let client = makeClient(server, clock: clock, retryPolicy: .never)
        let response = Task { try await client.send(APIRequest<Data>(path: "/slow", timeout: .milliseconds(250))) }
        await server.waitForHits("/slow", count: 1)
        await clock.waitForSleeper(of: .milliseconds(250))
        clock.advance(by: .milliseconds(250))
        let error = try await #require(throws: APIError.self) { try await response.value }
        guard case .timedOut(.milliseconds(250)) = error else {
            Issue.record("expected a 250 ms timeout, got \(error)")
            return
        }
    }

    @Test func cancellationEndsTheCallPromptly() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/stall") { _ in .stall }
        let client = makeClient(server)
        let response = Task { try await client.send(APIRequest<Data>.get("/stall")) }
        await server.waitForHits("/stall", count: 1)
        response.cancel()
        await #expect(throws: CancellationError.self) { try await response.value }
    }

    @Test func aRefusedConnectionIsATransportError() async throws {
        // A port held but not listening: a shut-down server's port could be taken by another test's server.
        let (fd, port) = try TestServerSocket.listenOnLoopback(listening: false)
        defer { TestServerSocket.closeFD(fd) }
        let closedURL = URL(string: "http://127.0.0.1:\(port)")!
        let client = APIClient(
            baseURL: closedURL, configuration: .init(transport: URLSessionTransport(), retryPolicy: .never))
        let error = try await #require(throws: APIError.self) { try await client.send(APIRequest<Void>.get("/")) }
        guard case .transport(.cannotConnect, let cause) = error else {
            Issue.record("expected transport(.cannotConnect), got \(error)")
            return
        }
        #expect((cause as? URLError)?.code == .cannotConnectToHost)
    }

    @Test func garbageInsteadOfHTTPIsAClearError() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/garbage") { _ in .raw(Data("SMTP READY\r\n\r\n".utf8)) }
        let client = APIClient(
            baseURL: server.baseURL, configuration: .init(transport: URLSessionTransport(), retryPolicy: .never))
        let error = try await #require(throws: APIError.self) {
            try await client.send(APIRequest<Void>.get("/garbage"))
        }
        guard case .transport = error else {
            Issue.record("expected a transport error, got \(error)")
            return
        }
    }

    @Test func nothingIsCachedAndNoCookiesAreKept() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/profile") { request in
            .text(
                request.header("Cookie") ?? "no cookie",
                headers: [("Cache-Control", "max-age=3600"), ("Set-Cookie", "session=abc; Path=/")])
        }
        let transport = URLSessionTransport()
        #expect(transport.session.configuration.urlCache == nil)
        // `cache: nil`: this test is about URLSession keeping nothing; Courier's own cache is tested elsewhere.
        let client = APIClient(baseURL: server.baseURL, configuration: .init(transport: transport, cache: nil))
        let first = try await client.send(APIRequest<Data>.get("/profile"))
        let second = try await client.send(APIRequest<Data>.get("/profile"))
        #expect(server.hits("/profile") == 2)
        #expect(String(decoding: first.value, as: UTF8.self) == "no cookie")
        #expect(String(decoding: second.value, as: UTF8.self) == "no cookie")
    }

    /// A GET keeps the method a new URLRequest starts with; every other method is written into the request.
    @Test(arguments: [RequestMethod.get, .head, .post, .delete, "PURGE"])
    func theURLRequestCarriesTheMethod(method: RequestMethod) throws {
        let url = try #require(URL(string: "http://127.0.0.1:1/items"))
        let request = URLSessionTransport.urlRequest(for: TransportRequest(method: method, url: url))
        #expect(request.httpMethod == method.rawValue)
    }

    @Test func everyResponseFieldBecomesAHeaderField() throws {
        let url = try #require(URL(string: "http://127.0.0.1:1/items"))
        let fields = ["Content-Type": "application/json", "ETag": "\"v1\"", "X-Trace": "t-1", "Set-Cookie": "a=1"]
        let head = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: fields))

        let headers = URLSessionTransport.headers(of: head)

        #expect(headers.count == fields.count)
        for (name, value) in fields {
            #expect(headers[name.lowercased()] == value)
        }
    }

    @Test func repeatedResponseHeadersAndRequestHeadersSurvive() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/echo") { request in
            .text(request.header("X-Tenant") ?? "none", headers: [("X-One", "1")])
        }
        let client = makeClient(server)
        let response = try await client.send(APIRequest<Data>.get("/echo", headers: ["X-Tenant": "acme"]))
        #expect(String(decoding: response.value, as: UTF8.self) == "acme")
        #expect(response.headers["X-One"] == "1")
    }
}
