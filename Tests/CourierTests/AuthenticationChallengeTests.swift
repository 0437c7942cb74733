import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `401` that carries a `WWW-Authenticate` challenge, over real sockets: URLSession on Linux treats it as a
/// request for credentials and waits; `URLSessionTransport` returns the `401` itself, for Courier's authenticator.
@Suite(.timeLimit(.minutes(1))) struct AuthenticationChallengeTests {
    private struct Echo: Decodable, Equatable {
        let token: String
    }

    /// A client on the real clock whose deadline (30 s, generous for sanitizer runs on busy machines) only turns a
    /// hang into a clear failure: the `401` comes back within milliseconds.
    private static func client(
        _ server: TestServer, transport: URLSessionTransport = URLSessionTransport(),
        authenticator: TokenRefresher? = nil
    ) -> APIClient {
        APIClient(
            baseURL: server.baseURL,
            configuration: .init(
                transport: transport, cache: nil, retryPolicy: .never, authenticator: authenticator,
                timeout: .seconds(30)))
    }

    private static func error(_ client: APIClient, _ path: String) async -> (any Error)? {
        do {
            _ = try await client.send(APIRequest<Data>.get(path))
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        #"Basic realm="x""#, "basic realm=x", #"Basic realm="x", charset="UTF-8""#, #"Bearer, Basic realm="api""#,
        #"Digest realm="x", nonce="abc", qop="auth""#, #"Bearer error="invalid_token""#, "Basic",
    ])
    func a401WithAChallengeIsUnauthorizedNotATimeout(challenge: String) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("GET", "/private") { _ in
            .json(#"{"error":"login"}"#, status: 401, headers: [("WWW-Authenticate", challenge)])
        }

        let error = await Self.error(Self.client(server), "/private")

        guard case .unauthorized(let response)? = error as? APIError else {
            Issue.record("expected unauthorized, got \(String(describing: error))")
            return
        }
        #expect(response.statusCode == 401)
        #expect(response.body == Data(#"{"error":"login"}"#.utf8))
        #expect(response.headers["WWW-Authenticate"] == challenge)
        #expect(server.hits("/private") == 1)
    }

    @Test func aBasicChallengeEarnsOneRefreshAndTheResendSucceeds() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("GET", "/me") { request in
            guard request.header("Authorization") == "Bearer secret-new" else {
                return .text("expired", status: 401, headers: [("WWW-Authenticate", #"Basic realm="api""#)])
            }
            return .json(#"{"token":"secret-new"}"#)
        }
        let refresher = TokenRefresher(credential: Credential(accessToken: "secret-old", identity: "alice")) { old in
            Credential(accessToken: "secret-new", identity: old?.identity ?? "alice")
        }
        let client = Self.client(server, authenticator: refresher)

        let response = try await client.send(APIRequest<Echo>.get("/me"))

        #expect(response.value == Echo(token: "secret-new"))
        #expect(response.attempts == 2)
        #expect(await refresher.refreshCount == 1)
        #expect(server.hits("/me") == 2)
        ReliabilityKit.record(
            "auth", "401 with WWW-Authenticate: Basic, then the refreshed token is accepted", cases: 1,
            outcome: "the 401 is returned at once; one refresh, one resend, success")
    }

    @Test func aSessionTheTransportDidNotMakeReturnsThe401WithoutItsBody() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("GET", "/private") { _ in
            .text("login", status: 401, headers: [("WWW-Authenticate", #"Basic realm="x""#)])
        }
        let session = URLSession(configuration: URLSessionTransport.defaultConfiguration)
        defer { session.invalidateAndCancel() }

        let error = await Self.error(Self.client(server, transport: URLSessionTransport(session: session)), "/private")

        guard case .unauthorized(let response)? = error as? APIError else {
            Issue.record("expected unauthorized, got \(String(describing: error))")
            return
        }
        #expect(response.statusCode == 401)
        #expect(response.headers["WWW-Authenticate"] == #"Basic realm="x""#)
    }
}
