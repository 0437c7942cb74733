import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private struct Echo: Decodable, Equatable {
    let token: String
}

/// The token refresh over real sockets: `URLSessionTransport` against a `TestServer` on loopback.
@Suite(.timeLimit(.minutes(1))) struct AuthenticationServerTests {
    /// A server whose `/me` accepts only the token `/oauth/token` issues, and a client whose refresh
    /// closure fetches that token through the same client.
    ///
    /// 1,000 concurrent requests take 1–2 s in a debug build on 2 cores (URLSession with 16 connections
    /// to the host), so the full count from the issue is used. How many first sends are refused varies
    /// (at least 16, up to 1,000): requests authorized after the refresh began wait for it instead.
    @Test func aThousandRequestsRejectedWithA401OverRealSocketsRefreshOnceAndAllSucceed() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let connections = 16
        let rejected = Locked(0)
        let tokenRequestsWithCredentials = Locked(0)
        server.route("GET", "/me") { [weak server] request in
            guard request.header("Authorization") == "Bearer secret-access-new" else {
                // Hold the 401s until one request per connection arrived with the old token, so at
                // least 16 of them meet one refresh in flight.
                await server?.waitForHits("/me", count: connections)
                rejected.withLock { $0 += 1 }
                return .json(#"{"error":"invalid_token"}"#, status: 401)
            }
            return .json(#"{"token":"secret-access-new"}"#)
        }
        server.route("POST", "/oauth/token") { request in
            if request.header("Authorization") != nil { tokenRequestsWithCredentials.withLock { $0 += 1 } }
            return .json(#"{"token":"secret-access-new"}"#)
        }

        let session = Self.makeSession(connections: connections)
        defer { session.invalidateAndCancel() }
        let box = Locked<APIClient?>(nil)
        let refresher = TokenRefresher(credential: Credential(accessToken: "secret-access-old", identity: "alice")) {
            old in
            let client = try #require(box.withLock { $0 })
            let token = try await client.send(APIRequest<Echo>.post("/oauth/token", body: ["grant_type": "refresh"]))
            return Credential(accessToken: token.value.token, identity: old?.identity ?? "alice")
        }
        var configuration = APIClient.Configuration(
            transport: URLSessionTransport(session: session), retryPolicy: .never, authenticator: refresher)
        configuration.isCoalescingEnabled = false
        let client = APIClient(baseURL: server.baseURL, configuration: configuration)
        box.withLock { $0 = client }

        let count = 1_000
        let calls = (0..<count).map { index in
            Task { try await client.send(APIRequest<Echo>.get("/me", headers: ["X-Call": "\(index)"])) }
        }
        var successes = 0
        for call in calls where try await call.value.value == Echo(token: "secret-access-new") { successes += 1 }

        #expect(successes == count)
        #expect(await refresher.refreshCount == 1)
        #expect(server.hits("/oauth/token") == 1)
        #expect(tokenRequestsWithCredentials.withLock { $0 } == 0)
        let refused = rejected.withLock { $0 }
        #expect(refused >= connections)
        #expect(server.hits("/me") == count + refused)
        let sendsPerCall = server.requests.filter { $0.path == "/me" }.reduce(into: [String: Int]()) {
            counts, request in
            counts[request.header("X-Call") ?? "?", default: 0] += 1
        }
        #expect(sendsPerCall.count == count)
        #expect(sendsPerCall.values.allSatisfy { $0 <= 2 })
    }

    private static func makeSession(connections: Int) -> URLSession {
        let configuration = URLSessionTransport.defaultConfiguration
        configuration.httpMaximumConnectionsPerHost = connections
        configuration.timeoutIntervalForRequest = 300  // a backstop for slow sanitizer runs
        return URLSession(configuration: configuration)
    }
}
