import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Responses never cross credential identities, credentials never cross origins, and secrets never show up
/// in anything a program might print.
@Suite(.timeLimit(.minutes(1))) struct SecurityTests {
    private typealias Echo = AuthTestKit.Echo

    /// A transport that answers with the bearer token it received, cacheable for ten minutes.
    private static func echoingTransport(gate: CoalescerTestKit.Gate? = nil) -> MockTransport {
        MockTransport { request, _ in
            if let gate { _ = await gate.wait() }
            let token = request.headers["Authorization"].map { String($0.dropFirst("Bearer ".count)) } ?? "none"
            return .text(200, #"{"token":"\#(token)"}"#, headers: ["Cache-Control": "max-age=600", "ETag": "\"v1\""])
        }
    }

    private static func refresher(_ token: String, identity: String) -> TokenRefresher {
        TokenRefresher(credential: Credential(accessToken: token, identity: identity)) { _ in
            throw AuthTestKit.EndpointDown()
        }
    }

    // MARK: Identities

    @Test func twoIdentitiesSharingACacheNeverSeeEachOthersResponses() async throws {
        let transport = Self.echoingTransport()
        let cache = ResponseCache()
        func client(_ refresher: TokenRefresher) -> APIClient {
            APIClient(
                baseURL: AuthTestKit.baseURL,
                configuration: .init(transport: transport, cache: cache, retryPolicy: .never, authenticator: refresher))
        }
        let alice = client(Self.refresher("secret-alice", identity: "alice"))
        let bob = client(Self.refresher("secret-bob", identity: "bob"))

        let aliceFirst = try await alice.send(APIRequest<Echo>.get("/me"))
        let bobFirst = try await bob.send(APIRequest<Echo>.get("/me"))
        let aliceAgain = try await alice.send(APIRequest<Echo>.get("/me"))
        let bobAgain = try await bob.send(APIRequest<Echo>.get("/me"))

        #expect(aliceFirst.value.token == "secret-alice" && aliceFirst.source == .network)
        #expect(bobFirst.value.token == "secret-bob" && bobFirst.source == .network)
        #expect(aliceAgain.value.token == "secret-alice" && aliceAgain.source == .cache)
        #expect(bobAgain.value.token == "secret-bob" && bobAgain.source == .cache)
        #expect(transport.callCount == 2)
        #expect(await cache.count == 2)
        let drained = await ReliabilityKit.expectDrained(alice)
        await ReliabilityKit.expectDrained(bob)
        ReliabilityKit.record(
            "security", "two identities, one shared cache, same URL", cases: 4,
            outcome: "each identity got only its own response (2 network, 2 cache)", leaked: !drained)
    }

    @Test func aSignInDuringAFlightStartsANewFlightInsteadOfJoiningIt() async throws {
        let gate = CoalescerTestKit.Gate()
        let transport = Self.echoingTransport(gate: gate)
        let refresher = Self.refresher("secret-alice", identity: "alice")
        let client = APIClient(
            baseURL: AuthTestKit.baseURL,
            configuration: .init(transport: transport, cache: nil, retryPolicy: .never, authenticator: refresher))

        let aliceCall = Task { try await client.send(APIRequest<Echo>.get("/me")) }
        #expect(await CoalescerTestKit.eventually { transport.callCount == 1 })
        await refresher.setCredential(Credential(accessToken: "secret-bob", identity: "bob"))
        let bobCall = Task { try await client.send(APIRequest<Echo>.get("/me")) }
        #expect(await CoalescerTestKit.eventually { transport.callCount == 2 })
        #expect(await client.coalescer.flightCount == 2)
        await gate.open()

        let alice = try await aliceCall.value
        let bob = try await bobCall.value
        #expect(alice.value.token == "secret-alice" && !alice.joined)
        #expect(bob.value.token == "secret-bob" && !bob.joined)
        let drained = await ReliabilityKit.expectDrained(client)
        ReliabilityKit.record(
            "security", "identity changes while a flight is in the air", cases: 2,
            outcome: "the second identity started its own flight; no shared response", leaked: !drained)
    }

    @Test func requestsWithDifferentAuthorizationHeadersNeverShareAFlightOrAnEntry() async throws {
        let gate = CoalescerTestKit.Gate()
        let transport = Self.echoingTransport(gate: gate)
        let cache = ResponseCache()
        let client = APIClient(
            baseURL: AuthTestKit.baseURL, configuration: .init(transport: transport, cache: cache, retryPolicy: .never))
        let tokens = ["secret-a", "secret-b", "secret-a", "secret-c", "secret-b", "secret-a"]
        let calls = tokens.map { token in
            Task { try await client.send(APIRequest<Echo>.get("/me", headers: ["Authorization": "Bearer \(token)"])) }
        }
        #expect(await CoalescerTestKit.eventually { await client.coalescer.waiterCount == tokens.count })
        #expect(await client.coalescer.flightCount == 3)
        await gate.open()
        for (token, call) in zip(tokens, calls) {
            #expect(try await call.value.value.token == token)
        }
        #expect(transport.callCount == 3)
        #expect(await cache.count == 3)
        let cached = try await client.send(APIRequest<Echo>.get("/me", headers: ["Authorization": "Bearer secret-b"]))
        #expect(cached.value.token == "secret-b" && cached.source == .cache)
        let anonymous = try await client.send(APIRequest<Echo>.get("/me"))
        #expect(anonymous.value.token == "none" && anonymous.source == .network)
        let drained = await ReliabilityKit.expectDrained(client, cacheEntries: 4)
        ReliabilityKit.record(
            "security", "same URL with different Authorization headers (no authenticator)", cases: tokens.count + 2,
            outcome: "3 flights for 3 tokens, 4 cache entries, every caller got its own token", leaked: !drained)
    }

    // MARK: Redirects

    private static func redirectingServers() throws -> (origin: TestServer, other: TestServer) {
        let origin = try TestServer()
        let other = try TestServer()
        let otherURL = other.baseURL
        origin.route("GET", "/away") { _ in .init(status: 302, headers: [("Location", "\(otherURL)/landing")]) }
        origin.route("GET", "/here") { _ in .init(status: 302, headers: [("Location", "/landing")]) }
        origin.route("GET", "/landing") { _ in .json(#"{"token":"origin"}"#) }
        other.route("GET", "/landing") { _ in .json(#"{"token":"other"}"#) }
        return (origin, other)
    }

    private static let credentialHeaders: HeaderFields = [
        "Cookie": "session=secret-cookie", "Proxy-Authorization": "Basic secret-proxy",
    ]

    private static func redirectClient(_ transport: URLSessionTransport, baseURL: URL) -> APIClient {
        APIClient(
            baseURL: baseURL,
            configuration: .init(
                transport: transport, cache: nil, retryPolicy: .never,
                authenticator: refresher("secret-redirect", identity: "alice")))
    }

    @Test func aRedirectToAnotherOriginDropsAuthorizationCookieAndProxyAuthorization() async throws {
        let (origin, other) = try Self.redirectingServers()
        defer {
            origin.shutdown()
            other.shutdown()
        }
        let client = Self.redirectClient(URLSessionTransport(), baseURL: origin.baseURL)

        let response = try await client.send(APIRequest<Echo>.get("/away", headers: Self.credentialHeaders))

        #expect(response.value.token == "other")
        let first = try #require(origin.requests.first { $0.path == "/away" })
        #expect(first.header("Authorization") == "Bearer secret-redirect")
        #expect(first.header("Cookie") == "session=secret-cookie")
        let landed = try #require(other.requests.first)
        #expect(landed.header("Authorization") == nil)
        #expect(landed.header("Cookie") == nil)
        #expect(landed.header("Proxy-Authorization") == nil)
        let drained = await ReliabilityKit.expectDrained(client)
        ReliabilityKit.record(
            "security", "302 to another origin (other loopback port)", cases: 1,
            outcome: "followed; Authorization, Cookie and Proxy-Authorization dropped", leaked: !drained)
    }

    @Test func aRedirectWithinTheOriginKeepsAuthorization() async throws {
        let (origin, other) = try Self.redirectingServers()
        defer {
            origin.shutdown()
            other.shutdown()
        }
        let client = Self.redirectClient(URLSessionTransport(), baseURL: origin.baseURL)

        let response = try await client.send(APIRequest<Echo>.get("/here"))

        #expect(response.value.token == "origin")
        let landed = try #require(origin.requests.first { $0.path == "/landing" })
        #expect(landed.header("Authorization") == "Bearer secret-redirect")
        #expect(other.totalHits == 0)
        ReliabilityKit.record(
            "security", "302 within the same origin", cases: 1, outcome: "followed; Authorization kept")
    }

    @Test func theRedirectRuleComparesSchemeHostAndPort() throws {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:8081/landing")!)
        request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")
        request.setValue("a=secret", forHTTPHeaderField: "Cookie")
        let cases: [(from: String, keeps: Bool)] = [
            ("http://127.0.0.1:8081/start", true),
            ("HTTP://127.0.0.1:8081/other?x=1", true),
            ("http://127.0.0.1:8080/start", false),
            ("https://127.0.0.1:8081/start", false),
            ("http://localhost:8081/start", false),
        ]
        for (from, keeps) in cases {
            let redirected = RedirectGuard.redirect(request, from: URL(string: from))
            #expect((redirected.value(forHTTPHeaderField: "Authorization") != nil) == keeps, "from \(from)")
            #expect((redirected.value(forHTTPHeaderField: "Cookie") != nil) == keeps, "from \(from)")
        }
        #expect(RedirectGuard.redirect(request, from: nil).value(forHTTPHeaderField: "Authorization") == nil)
    }

    // MARK: Secrets

    private static func error(of client: APIClient, _ request: APIRequest<Echo>) async -> (any Error)? {
        do {
            _ = try await client.send(request)
            return nil
        } catch {
            return error
        }
    }

    @Test func secretsNeverAppearInErrorsRequestsOrCredentials() async throws {
        let secret = "secret-sauce-7f3a"
        var printed: [String] = []
        var failures: [String] = []
        func collect(_ value: Any) {
            printed.append(AuthTestKit.printed(value))
        }
        func note(_ error: (any Error)?) {
            guard let error else { return failures.append("success") }
            failures.append(ReliabilityKit.name(of: error))
            collect(error)
            if let error = error as? APIError {
                collect(error.localizedDescription)
                if let underlying = error.underlyingError { collect(underlying) }
            }
        }
        func failure(_ client: APIClient, _ request: APIRequest<Echo>) async {
            note(await Self.error(of: client, request))
        }
        let clock = TestClock()
        let refusing = MockTransport { _, _ in .text(401, #"{"error":"invalid_token"}"#) }
        var refreshes = 0
        let refreshed = TokenRefresher(credential: Credential(accessToken: "\(secret)-0", identity: "alice")) {
            old in Credential(accessToken: "\(secret)-1", refreshToken: "\(secret)-r", identity: old?.identity ?? "a")
        }
        let unauthorized = AuthTestKit.makeClient(refusing, refresher: refreshed, clock: clock)
        await failure(unauthorized, .get("/me"))
        refreshes = await refreshed.refreshCount
        collect(refusing.requests)
        collect(await refreshed.credential as Any)

        let broken = TokenRefresher(credential: Credential(accessToken: "\(secret)\r\nX-Injected: 1", identity: "eve"))
        {
            _ in throw AuthTestKit.EndpointDown()
        }
        await failure(AuthTestKit.makeClient(.json("{}"), refresher: broken), .get("/me"))

        let failing = TokenRefresher(credential: nil) { _ in throw AuthTestKit.EndpointDown() }
        await failure(AuthTestKit.makeClient(.json("{}"), refresher: failing), .get("/me"))

        let undecodable = MockTransport.json(#"{"unexpected":true}"#)
        let decoding = AuthTestKit.makeClient(
            undecodable, refresher: Self.refresher(secret, identity: "alice"))
        await failure(decoding, .get("/me"))

        let stuckGate = CoalescerTestKit.Gate()
        let stuck = MockTransport { _, _ in
            await stuckGate.waitIgnoringCancellation()
            return .text(200)
        }
        let timing = AuthTestKit.makeClient(stuck, refresher: Self.refresher(secret, identity: "alice"), clock: clock)
        let timed = Task { await Self.error(of: timing, APIRequest<Echo>(path: "/slow", timeout: .seconds(1))) }
        await clock.waitForSleeper(of: .seconds(1))
        clock.advance(by: .seconds(1))
        note(await timed.value)
        await stuckGate.open()

        let refused = APIClient(
            baseURL: URL(string: "http://127.0.0.1:9")!,
            configuration: .init(
                transport: URLSessionTransport(), retryPolicy: .never,
                authenticator: Self.refresher(secret, identity: "alice")))
        await failure(refused, .get("/me", query: [URLQueryItem(name: "q", value: "1")]))

        await failure(
            AuthTestKit.makeClient(.json("{}"), refresher: nil),
            .get("/me", headers: ["Authorization": "Bearer \(secret)\n"]))

        let rejectedAdapter = APIClient(
            baseURL: AuthTestKit.baseURL,
            configuration: .init(
                transport: MockTransport.json("{}"), retryPolicy: .never,
                adapters: [AnyRequestAdapter { $0.headers["Authorization"] = "Bearer \(secret)\u{0}" }]))
        await failure(rejectedAdapter, .get("/me"))

        #expect(refreshes == 1)
        #expect(
            failures == [
                "unauthorized", "invalidRequest(invalidHeaderValue)", "authenticationFailed", "decodingFailed",
                "timedOut", "transport(.cannotConnect)", "invalidRequest(invalidHeaderValue)",
                "invalidRequest(invalidHeaderValue)",
            ])
        let leaks = printed.filter { $0.contains(secret) }
        #expect(leaks.isEmpty, "printed secrets: \(leaks.count)")
        ReliabilityKit.record(
            "security", "errors, requests and credentials printed (description, reflecting, dump)",
            cases: printed.count, outcome: "\(failures.count) failure kinds; no token in any text",
            leaked: !leaks.isEmpty)
    }
}
