import Foundation
import Testing

@testable import Courier

/// Every way a credential can be attached to a call, tried by two users of one service: no row shares a cached or
/// an in-flight response between them, and no credential reaches another origin through a redirect.
@Suite(.timeLimit(.minutes(1))) struct IsolationTests {
    /// The user a call is made for, where an adapter reads it (as a service reads its request context).
    @TaskLocal static var currentUser = ""

    enum Attachment: String, CaseIterable, CustomTestStringConvertible {
        case requestHeader, defaultHeader, undeclaredAdapter, declaredAdapter, authorizeClosure, queryParameter
        case userInfo, tokenRefresher

        var testDescription: String { rawValue }

        /// The user's secret as this attachment carries it. The user-info pair differs only in case.
        func secret(_ user: String) -> String {
            self == .userInfo ? (user == "alice" ? "Secret" : "secret") : "\(user)-\(rawValue)-secret"
        }

        /// Whether each user needs a client of their own (the credential is client-wide).
        var isClientWide: Bool { [.defaultHeader, .authorizeClosure, .tokenRefresher].contains(self) }
    }

    // MARK: Building Calls

    /// A client for `user` (or for everyone, when the attachment is per call) over `transport` and `cache`.
    static func makeClient(
        _ attachment: Attachment, user: String, baseURL: URL, transport: any HTTPTransport, cache: ResponseCache?
    ) -> APIClient {
        var configuration = APIClient.Configuration(transport: transport, cache: cache, retryPolicy: .never)
        let secret = attachment.secret(user)
        switch attachment {
        case .defaultHeader:
            configuration.headers["X-API-Key"] = secret
        case .undeclaredAdapter:
            // A credential by name, set by an adapter that declares nothing.
            configuration.adapters = [
                AnyRequestAdapter { request in request.headers["X-API-Key"] = attachment.secret(Self.currentUser) }
            ]
        case .declaredAdapter:
            configuration.adapters = [
                AnyRequestAdapter(variesOn: ["X-Tenant"]) { request in
                    request.headers["X-Tenant"] = attachment.secret(Self.currentUser)
                }
            ]
        case .authorizeClosure, .tokenRefresher:
            configuration.authenticator = TokenRefresher(
                credential: Credential(accessToken: secret, identity: user)
            ) { _ in throw CancellationError() }
            if attachment == .authorizeClosure {
                configuration.authorize = { request, credential in
                    request.headers["X-Vendor-Token"] = credential.accessToken
                }
            }
        case .requestHeader, .queryParameter, .userInfo:
            break
        }
        return APIClient(baseURL: baseURL, configuration: configuration)
    }

    /// The call `user` makes to `path`.
    static func request(_ attachment: Attachment, user: String, baseURL: URL, path: String) -> APIRequest<Data> {
        let secret = attachment.secret(user)
        switch attachment {
        case .requestHeader:
            return .get(path, headers: ["X-API-Key": secret])
        case .queryParameter:
            return .get(path, query: [URLQueryItem(name: "api_key", value: secret)])
        case .userInfo:
            var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
            components.user = "user"
            components.password = secret
            return .get(components.url!.absoluteString + path)
        default:
            return .get(path)
        }
    }

    /// Sends `user`'s call with the user in the task-local context, as a service's route would.
    static func send(
        _ attachment: Attachment, user: String, client: APIClient, baseURL: URL, path: String = "/me"
    ) async throws -> String {
        let request = request(attachment, user: user, baseURL: baseURL, path: path)
        let response = try await $currentUser.withValue(user) { try await client.send(request) }
        return String(decoding: response.value, as: UTF8.self)
    }

    /// A transport that answers every request with everything it received (URL and header lines, unredacted), as
    /// fresh for a minute and varying on `X-Tenant`. `gate` holds each call until it says go.
    static func echoTransport(gate: @escaping @Sendable () async -> Void = {}) -> MockTransport {
        MockTransport { request, _ in
            await gate()
            let lines = [request.url.absoluteString] + request.headers.fields.map { "\($0.name): \($0.value)" }
            return TransportResponse(
                statusCode: 200, headers: ["Cache-Control": "max-age=60", "Vary": "X-Tenant"],
                body: Data(lines.joined(separator: "\n").utf8))
        }
    }

    static let baseURL = URL(string: "https://api.example.com")!

    // MARK: Cache

    @Test(arguments: Attachment.allCases)
    func twoUsersNeverShareACachedResponse(_ attachment: Attachment) async throws {
        let transport = Self.echoTransport()
        let cache = ResponseCache()
        let alice = Self.makeClient(
            attachment, user: "alice", baseURL: Self.baseURL, transport: transport, cache: cache)
        let bob =
            attachment.isClientWide
            ? Self.makeClient(attachment, user: "bob", baseURL: Self.baseURL, transport: transport, cache: cache)
            : alice

        let aliceSaw = try await Self.send(attachment, user: "alice", client: alice, baseURL: Self.baseURL)
        let bobSaw = try await Self.send(attachment, user: "bob", client: bob, baseURL: Self.baseURL)

        #expect(transport.callCount == 2, "Bob must not be served Alice's stored response")
        #expect(aliceSaw.contains(attachment.secret("alice")))
        #expect(bobSaw.contains(attachment.secret("bob")))
        #expect(!bobSaw.contains(attachment.secret("alice")))
        ReliabilityKit.record(
            "isolation", "two users, credential by \(attachment.rawValue): cached response", cases: 2,
            outcome: "not shared: \(transport.callCount) upstream calls, each user got their own answer")
    }

    // MARK: Coalescing

    @Test(arguments: Attachment.allCases)
    func twoUsersNeverShareAFlight(_ attachment: Attachment) async throws {
        // Each upstream call waits until both users are waiting somewhere (one shared flight or two of their own)
        // or both calls arrived, so the two calls overlap however the scheduler runs them.
        let clients = Locked<[APIClient]>([])
        let arrived = Locked(0)
        let transport = Self.echoTransport {
            arrived.withLock { $0 += 1 }
            for _ in 0..<100_000 {
                var waiting = 0
                for client in clients.withLock({ $0 }) { waiting += await client.coalescer.waiterCount }
                if waiting >= 2 || arrived.withLock({ $0 }) >= 2 { return }
                await Task.yield()
            }
        }
        let alice = Self.makeClient(attachment, user: "alice", baseURL: Self.baseURL, transport: transport, cache: nil)
        let bob =
            attachment.isClientWide
            ? Self.makeClient(attachment, user: "bob", baseURL: Self.baseURL, transport: transport, cache: nil)
            : alice
        clients.withLock { $0 = alice === bob ? [alice] : [alice, bob] }

        async let aliceSaw = Self.send(attachment, user: "alice", client: alice, baseURL: Self.baseURL)
        async let bobSaw = Self.send(attachment, user: "bob", client: bob, baseURL: Self.baseURL)
        let (seenByAlice, seenByBob) = try await (aliceSaw, bobSaw)

        #expect(transport.callCount == 2, "Bob must not join Alice's flight")
        #expect(seenByAlice.contains(attachment.secret("alice")))
        #expect(seenByBob.contains(attachment.secret("bob")))
        #expect(!seenByBob.contains(attachment.secret("alice")))
        ReliabilityKit.record(
            "isolation", "two users at once, credential by \(attachment.rawValue): in-flight call", cases: 2,
            outcome: "not shared: \(transport.callCount) upstream calls, each user got their own answer")
    }

    // MARK: Redirects

    @Test(arguments: Attachment.allCases)
    func noCredentialFollowsARedirectToAnotherOrigin(_ attachment: Attachment) async throws {
        let origin = try TestServer()
        let other = try TestServer()
        defer {
            origin.shutdown()
            other.shutdown()
        }
        let landing = other.baseURL.appendingPathComponent("landing").absoluteString
        origin.route("GET", "/away") { _ in .init(status: 302, headers: [("Location", landing)]) }
        other.route("GET", "/landing") { _ in .text("landed") }
        let client = Self.makeClient(
            attachment, user: "alice", baseURL: origin.baseURL, transport: URLSessionTransport(), cache: nil)

        let body = try await Self.send(
            attachment, user: "alice", client: client, baseURL: origin.baseURL, path: "/away")

        #expect(body == "landed")
        let first = try #require(origin.requests.first)
        let sentToOrigin = ([first.target] + first.headers.map { "\($0.name): \($0.value)" }).joined(separator: "\n")
        let landed = try #require(other.requests.first)
        let receivedElsewhere = ([landed.target] + landed.headers.map { "\($0.name): \($0.value)" })
            .joined(separator: "\n")
        let secret = attachment.secret("alice")
        let basic = Data("user:\(secret)".utf8).base64EncodedString()
        #expect(sentToOrigin.contains(secret) || sentToOrigin.contains(basic), "the credential went to its origin")
        #expect(!receivedElsewhere.contains(secret))
        #expect(!receivedElsewhere.contains(basic))
        #expect(landed.header("Authorization") == nil)
        ReliabilityKit.record(
            "isolation", "302 to another origin, credential by \(attachment.rawValue) (real sockets)", cases: 1,
            outcome: "followed; the credential reached its origin only")
    }
}

/// The client's credentials go only to the base URL's origin and the origins the configuration trusts.
@Suite(.timeLimit(.minutes(1))) struct CredentialOriginTests {
    /// What `server` received on its first request: `Authorization` and `X-API-Key`.
    private static func credentials(_ server: TestServer) throws -> (String?, String?) {
        let received = try #require(server.requests.first)
        return (received.header("Authorization"), received.header("X-API-Key"))
    }

    private static func makeClient(base: URL, configure: (inout APIClient.Configuration) -> Void = { _ in })
        -> APIClient
    {
        var configuration = APIClient.Configuration(
            transport: URLSessionTransport(), cache: nil, retryPolicy: .never,
            authenticator: TokenRefresher(credential: Credential(accessToken: "api-token", identity: "alice")) { _ in
                throw CancellationError()
            })
        configuration.headers = ["X-API-Key": "api-key", "User-Agent": "courier-tests"]
        configure(&configuration)
        return APIClient(baseURL: base, configuration: configuration)
    }

    @Test func anAbsoluteURLToAnotherOriginGetsNoClientCredential() async throws {
        let api = try TestServer()
        let cdn = try TestServer()
        defer {
            api.shutdown()
            cdn.shutdown()
        }
        cdn.route("GET", "/a.png") { _ in .text("image") }
        api.route("GET", "/me") { _ in .text("me") }
        let client = Self.makeClient(base: api.baseURL)

        _ = try await client.send(APIRequest<Data>.get(cdn.baseURL.absoluteString + "/a.png"))
        _ = try await client.send(APIRequest<Data>.get(api.baseURL.absoluteString + "/me"))

        let (cdnAuthorization, cdnKey) = try Self.credentials(cdn)
        #expect(cdnAuthorization == nil)
        #expect(cdnKey == nil)
        #expect(cdn.requests.first?.header("User-Agent") == "courier-tests", "other default headers still go")
        let (apiAuthorization, apiKey) = try Self.credentials(api)
        #expect(apiAuthorization == "Bearer api-token", "an absolute URL to the base origin is trusted")
        #expect(apiKey == "api-key")
    }

    @Test func trustedOriginsAndAnOptInReceiveThem() async throws {
        let api = try TestServer()
        let uploads = try TestServer()
        let partner = try TestServer()
        defer {
            for server in [api, uploads, partner] { server.shutdown() }
        }
        uploads.route("GET", "/u") { _ in .text("u") }
        partner.route("GET", "/p") { _ in .text("p") }
        let client = Self.makeClient(base: api.baseURL) { $0.trustedOrigins = [uploads.baseURL] }

        _ = try await client.send(APIRequest<Data>.get(uploads.baseURL.absoluteString + "/u"))
        var optedIn = APIRequest<Data>.get(partner.baseURL.absoluteString + "/p")
        optedIn.sendsCredentialsToAnyOrigin = true
        _ = try await client.send(optedIn)

        #expect(try Self.credentials(uploads) == ("Bearer api-token", "api-key"))
        #expect(try Self.credentials(partner) == ("Bearer api-token", "api-key"))
    }
}

/// What adapters add is seen by `Vary` and the coalescing key, or the call is kept private.
@Suite(.timeLimit(.minutes(1))) struct AdapterVisibilityTests {
    @TaskLocal static var tenant = ""

    private static func makeClient(_ transport: MockTransport, variesOn: [String]?) -> APIClient {
        var configuration = APIClient.Configuration(transport: transport, cache: ResponseCache(), retryPolicy: .never)
        configuration.adapters = [
            AnyRequestAdapter(variesOn: variesOn) { request in request.headers["X-Tenant"] = Self.tenant }
        ]
        return APIClient(baseURL: IsolationTests.baseURL, configuration: configuration)
    }

    private static func send(_ client: APIClient, tenant: String) async throws -> APIResponse<Data> {
        try await $tenant.withValue(tenant) { try await client.send(APIRequest<Data>.get("/report")) }
    }

    @Test func varyIsMatchedAgainstWhatAnUndeclaredAdapterAddedAndNothingIsStored() async throws {
        let transport = IsolationTests.echoTransport()
        let client = Self.makeClient(transport, variesOn: nil)

        let a = try await Self.send(client, tenant: "tenant-a")
        let b = try await Self.send(client, tenant: "tenant-b")
        let again = try await Self.send(client, tenant: "tenant-a")

        #expect(String(decoding: b.value, as: UTF8.self).contains("X-Tenant: tenant-b"))
        #expect([a.source, b.source, again.source] == [.network, .network, .network], "a private call is not stored")
        #expect(transport.callCount == 3)
        #expect(await client.configuration.cache?.count == 0)
    }

    @Test func aDeclaredHeaderPartitionsTheCacheAndTheKey() async throws {
        let transport = IsolationTests.echoTransport()
        let client = Self.makeClient(transport, variesOn: ["X-Tenant"])

        _ = try await Self.send(client, tenant: "tenant-a")
        let b = try await Self.send(client, tenant: "tenant-b")
        let again = try await Self.send(client, tenant: "tenant-a")

        #expect(String(decoding: b.value, as: UTF8.self).contains("X-Tenant: tenant-b"))
        #expect(b.source == .network)
        #expect(again.source == .cache, "the same tenant is served from the cache")
        #expect(String(decoding: again.value, as: UTF8.self).contains("X-Tenant: tenant-a"))
        #expect(transport.callCount == 2)
    }

    @Test func anAdapterThatDeclaresNothingVariesKeepsCallsShared() async throws {
        let transport = MockTransport { _, _ in .text(200, "report", headers: ["Cache-Control": "max-age=60"]) }
        let client = Self.makeClient(transport, variesOn: [])

        _ = try await Self.send(client, tenant: "trace-1")
        let second = try await Self.send(client, tenant: "trace-2")

        #expect(second.source == .cache)
        #expect(transport.callCount == 1)
    }
}
