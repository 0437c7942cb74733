import CourierTesting
import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private typealias Kit = AuthTestKit

/// Credentials never cross the network in clear text: a request that would carry one (the authenticator's token, a
/// credential header, a credential query parameter, a URL's user information) to a non-loopback `http://` URL fails
/// with ``InvalidRequestReason/credentialsOverCleartext(host:)`` and nothing is sent, unless the configuration opts
/// in with ``APIClient/Configuration/allowsCredentialsOverCleartext``. Loopback (`127.0.0.0/8`, `::1`, `localhost`)
/// never leaves the machine and is allowed.
@Suite(.timeLimit(.minutes(1))) struct CleartextCredentialTests {
    private static let cleartext = URL(string: "http://api.example.com")!

    /// A client of `transport` at `baseURL`, with an authenticator when `authenticated`.
    private static func client(
        _ transport: StubTransport, baseURL: URL = cleartext, authenticated: Bool = false, optIn: Bool = false,
        configure: (inout APIClient.Configuration) -> Void = { _ in }
    ) -> APIClient {
        var configuration = APIClient.Configuration(transport: transport, cache: nil, retryPolicy: .never)
        if authenticated {
            configuration.authenticator = TokenRefresher(credential: Kit.credential(expiresIn: nil)) { _ in
                throw Kit.EndpointDown()
            }
        }
        configuration.allowsCredentialsOverCleartext = optIn
        configure(&configuration)
        return APIClient(baseURL: baseURL, configuration: configuration)
    }

    /// Expects the refusal, says how to opt in, and checks that nothing was sent.
    private static func expectRefused(
        _ transport: StubTransport, sourceLocation: SourceLocation = #_sourceLocation,
        _ call: () async throws -> Void
    ) async {
        do {
            try await call()
            Issue.record("the credential was sent in clear text", sourceLocation: sourceLocation)
        } catch let error as APIError {
            guard case .invalidRequest(.credentialsOverCleartext(let host)) = error else {
                Issue.record("expected credentialsOverCleartext, got \(error)", sourceLocation: sourceLocation)
                return
            }
            #expect(host == "api.example.com", sourceLocation: sourceLocation)
            #expect(error.description.contains("allowsCredentialsOverCleartext"), sourceLocation: sourceLocation)
            #expect(!error.description.contains(Kit.secret), sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected an APIError, got \(error)", sourceLocation: sourceLocation)
        }
        #expect(transport.callCount == 0, "nothing is sent", sourceLocation: sourceLocation)
    }

    // MARK: Every way a credential attaches

    @Test func theAuthenticatorsTokenIsNotSentInClearText() async {
        let transport = StubTransport.responding()
        let client = Self.client(transport, authenticated: true)
        await Self.expectRefused(transport) { _ = try await client.send(APIRequest<Data>.get("/me")) }
        // The same URL again: a plain `GET` whose request the client may have kept.
        await Self.expectRefused(transport) { _ = try await client.send(APIRequest<Data>.get("/me")) }
        await Self.expectRefused(transport) { _ = try await client.send(APIRequest<Data>.post("/me", body: ["a": 1])) }
        await Self.expectRefused(transport) { _ = try await client.stream(APIRequest<Data>.get("/me")) }
        let body = StreamedBody(length: 0) { ByteStream(Data()) }
        await Self.expectRefused(transport) {
            _ = try await client.upload(APIRequest<Void>.put("/blob"), body: body).value
        }
    }

    @Test func aDefaultCredentialHeaderIsNotSentInClearText() async {
        let transport = StubTransport.responding()
        let client = Self.client(transport) { $0.headers["X-API-Key"] = "secret-key" }
        await Self.expectRefused(transport) { _ = try await client.send(APIRequest<Data>.get("/items")) }
    }

    @Test func aRequestsOwnCredentialHeaderQueryOrUserInfoIsNotSentInClearText() async {
        let transport = StubTransport.responding()
        let client = Self.client(transport) { $0.credentials.headerNames.insert("X-Tenant-Secret") }
        await Self.expectRefused(transport) {
            _ = try await client.send(APIRequest<Data>.get("/items", headers: ["Authorization": "Basic secret"]))
        }
        await Self.expectRefused(transport) {
            _ = try await client.send(APIRequest<Data>.get("/items", headers: ["X-Tenant-Secret": "secret"]))
        }
        await Self.expectRefused(transport) {
            let query = [URLQueryItem(name: "api_key", value: "secret")]
            _ = try await client.send(APIRequest<Data>.get("/items", query: query))
        }
        await Self.expectRefused(transport) {
            _ = try await client.send(APIRequest<Data>.get("http://ada:secret@api.example.com/items"))
        }
    }

    /// An adapter's credential is checked after it ran, on every attempt.
    @Test func anAdaptersCredentialIsNotSentInClearText() async {
        struct APIKey: RequestAdapter {
            func adapt(_ request: TransportRequest) async throws -> TransportRequest {
                var request = request
                request.headers["X-API-Key"] = "secret-key"
                return request
            }
        }
        let transport = StubTransport.responding()
        let client = Self.client(transport) { $0.adapters = [APIKey()] }
        await Self.expectRefused(transport) { _ = try await client.send(APIRequest<Data>.get("/items")) }
    }

    /// The token is checked on the URL each attempt sends to, just before it is added: a plain `GET` whose request the
    /// client kept from calls without authentication, and an adapter that moves an `https` call to `http`.
    @Test func theTokenIsCheckedOnTheURLTheAttemptSendsTo() async {
        let transport = StubTransport.responding()
        let client = Self.client(transport, authenticated: true)
        var anonymous = APIRequest<Data>.get("/feed")
        anonymous.requiresAuthentication = false
        for _ in 0..<3 { _ = try? await client.send(anonymous) }
        #expect(transport.callCount == 3)
        let sentBefore = transport.callCount
        do {
            _ = try await client.send(APIRequest<Data>.get("/feed"))
            Issue.record("the token was sent in clear text")
        } catch {
            guard case .invalidRequest(.credentialsOverCleartext) = error as? APIError else {
                Issue.record("expected credentialsOverCleartext, got \(error)")
                return
            }
        }
        #expect(transport.callCount == sentBefore)

        struct Downgrade: RequestAdapter {
            func adapt(_ request: TransportRequest) async throws -> TransportRequest {
                var request = request
                request.url = URL(string: "http://api.example.com" + request.url.path)!
                return request
            }
        }
        let secureTransport = StubTransport.responding()
        let secure = Self.client(
            secureTransport, baseURL: URL(string: "https://api.example.com")!, authenticated: true
        ) { $0.adapters = [Downgrade()] }
        await Self.expectRefused(secureTransport) { _ = try await secure.send(APIRequest<Data>.get("/me")) }
    }

    // MARK: What is allowed

    @Test func aRequestWithoutCredentialsIsSentInClearText() async throws {
        let transport = StubTransport.responding()
        let client = Self.client(transport, authenticated: true)
        var request = APIRequest<Data>.get("/public")
        request.requiresAuthentication = false
        _ = try await client.send(request)
        #expect(transport.callCount == 1)
        #expect(transport.requests.first?.headers["Authorization"] == nil)
    }

    @Test(arguments: [
        "http://127.0.0.1:8080", "http://127.9.8.7", "http://localhost:3000", "http://LOCALHOST", "http://[::1]:8080",
    ])
    func loopbackReceivesCredentialsOverHTTP(_ base: String) async throws {
        let transport = StubTransport.responding()
        let client = Self.client(transport, baseURL: URL(string: base)!, authenticated: true) {
            $0.headers["X-API-Key"] = "secret-key"
        }
        _ = try await client.send(APIRequest<Data>.get("/me"))
        let sent = try #require(transport.requests.first)
        #expect(sent.headers["Authorization"] == "Bearer secret-access-0")
        #expect(sent.headers["X-API-Key"] == "secret-key")
    }

    @Test(arguments: ["http://127.0.0.1.example.com", "http://localhost.example.com", "http://128.0.0.1"])
    func namesThatOnlyLookLikeLoopbackAreNot(_ base: String) async {
        let transport = StubTransport.responding()
        let client = Self.client(transport, baseURL: URL(string: base)!, authenticated: true)
        do {
            _ = try await client.send(APIRequest<Data>.get("/me"))
            Issue.record("the credential was sent in clear text to \(base)")
        } catch {
            guard case .invalidRequest(.credentialsOverCleartext) = error as? APIError else {
                Issue.record("expected credentialsOverCleartext, got \(error)")
                return
            }
        }
        #expect(transport.callCount == 0)
    }

    @Test func theConfigurationCanOptIn() async throws {
        let transport = StubTransport.responding()
        let client = Self.client(transport, authenticated: true, optIn: true) {
            $0.headers["X-API-Key"] = "secret-key"
        }
        _ = try await client.send(APIRequest<Data>.get("/me", query: [URLQueryItem(name: "api_key", value: "secret")]))
        let sent = try #require(transport.requests.first)
        #expect(sent.headers["Authorization"] == "Bearer secret-access-0")
        #expect(sent.headers["X-API-Key"] == "secret-key")
    }

    @Test func httpsIsUnaffected() async throws {
        let transport = StubTransport.responding()
        let client = Self.client(transport, baseURL: URL(string: "https://api.example.com")!, authenticated: true)
        _ = try await client.send(APIRequest<Data>.get("/me"))
        #expect(transport.requests.first?.headers["Authorization"] == "Bearer secret-access-0")
    }

    // MARK: Redirects

    /// A redirect from `https://host` to `http://host` changes the origin (the scheme is part of it): the credential
    /// fields are dropped, as for any other origin.
    @Test func aDowngradeRedirectToTheSameHostDropsCredentials() throws {
        var next = URLRequest(url: URL(string: "http://api.example.com/next")!)
        next.setValue("Bearer secret-access-1", forHTTPHeaderField: "Authorization")
        next.setValue("secret-key", forHTTPHeaderField: "X-API-Key")
        next.setValue("text/plain", forHTTPHeaderField: "Accept")
        let redirected = RedirectGuard.redirect(next, from: URL(string: "https://api.example.com/start")!)
        #expect(redirected.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(redirected.value(forHTTPHeaderField: "X-API-Key") == nil)
        #expect(redirected.value(forHTTPHeaderField: "Accept") == "text/plain")
        let same = RedirectGuard.redirect(next, from: URL(string: "http://api.example.com/start")!)
        #expect(same.value(forHTTPHeaderField: "Authorization") == "Bearer secret-access-1")
    }
}
