import Foundation
import Testing

@testable import Courier

private typealias Kit = AuthTestKit
private typealias Gate = CoalescerTestKit.Gate
private typealias Echo = AuthTestKit.Echo

/// What goes on the wire for an authenticated client: which credential, applied how, and never
/// another identity's.
@Suite(.timeLimit(.minutes(1))) struct AuthorizationTests {
    @Test func theRefreshClosureCanCallTheSameClientAndItsRequestCarriesNoCredential() async throws {
        let transport = MockTransport { request, _ in
            if request.url.path == "/oauth/token" {
                return .text(200, #"{"token":"secret-access-7"}"#)
            }
            return .text(200, #"{"token":"\#(request.headers["Authorization"] ?? "none")"}"#)
        }
        let box = Locked<APIClient?>(nil)
        let refresher = TokenRefresher(credential: Kit.credential(expiresIn: -1), currentDate: { Kit.start }) { old in
            let client = try #require(box.withLock { $0 })
            let echo = try await client.send(
                APIRequest<Echo>.post("/oauth/token", body: ["grant_type": "refresh_token"]))
            return Credential(accessToken: echo.value.token, identity: old?.identity ?? "?")
        }
        let client = Kit.makeClient(transport, refresher: refresher)
        box.withLock { $0 = client }
        let response = try await client.send(APIRequest<Echo>.get("/me"))
        #expect(response.value == Echo(token: "Bearer secret-access-7"))
        #expect(transport.callCount == 2)
        let tokenRequest = transport.requests[0]
        #expect(tokenRequest.url.path == "/oauth/token")
        #expect(tokenRequest.headers["Authorization"] == nil)
        #expect(await refresher.refreshCount == 1)
    }

    @Test func twoIdentitiesNeverShareAFlight() async throws {
        let gate = Gate()
        let issuer = Kit.Issuer(date: Kit.ManualDate())
        let refresher = Kit.refresher(Kit.credential("secret-access-alice", identity: "alice"), issuer: issuer)
        let transport = MockTransport { request, _ in
            _ = await gate.wait()
            return .text(200, #"{"token":"\#(request.headers["Authorization"] ?? "none")"}"#)
        }
        let client = Kit.makeClient(transport, refresher: refresher)
        let alice = Task { try await client.send(APIRequest<Echo>.get("/me")) }
        // Alice's request is on the wire, with her token, before Bob signs in.
        #expect(await CoalescerTestKit.eventually { transport.callCount == 1 })
        await refresher.setCredential(Kit.credential("secret-access-bob", identity: "bob"))
        let bob = Task { try await client.send(APIRequest<Echo>.get("/me")) }
        #expect(await CoalescerTestKit.eventually { transport.callCount == 2 })
        #expect(await client.coalescer.flightCount == 2)
        await gate.open()
        #expect(try await alice.value.value == Echo(token: "Bearer secret-access-alice"))
        #expect(try await bob.value.joined == false)
        #expect(try await bob.value.value == Echo(token: "Bearer secret-access-bob"))
        #expect(transport.callCount == 2)
    }

    @Test func aFlightIsNeverResentWithAnotherIdentitysCredential() async throws {
        let clock = TestClock()
        let issuer = Kit.Issuer(date: Kit.ManualDate())
        let refresher = Kit.refresher(Kit.credential("secret-access-alice", identity: "alice"), issuer: issuer)
        let transport = MockTransport.responding(status: 503)
        let client = Kit.makeClient(
            transport, refresher: refresher, retryPolicy: RetryPolicy(jitter: .none), clock: clock)
        let alice = Task { try await client.send(APIRequest<Echo>.get("/me")) }
        await clock.waitForSleeper(of: .milliseconds(500))
        await refresher.setCredential(Kit.credential("secret-access-bob", identity: "bob"))
        clock.advance(by: .milliseconds(500))
        let error = try await #require(throws: APIError.self) { try await alice.value }
        guard case .identityChanged? = Kit.authenticationFailure(error) else {
            Issue.record("expected identityChanged, got \(error)")
            return
        }
        #expect(transport.callCount == 1)
    }

    @Test func theCredentialIsAppliedAfterTheAdaptersAndTheWayItIsAppliedIsConfigurable() async throws {
        let transport = MockTransport.responding(status: 200)
        let refresher = Kit.refresher(Kit.credential(), issuer: Kit.Issuer(date: Kit.ManualDate()))
        var configuration = APIClient.Configuration(
            transport: transport, retryPolicy: .never,
            adapters: [AnyRequestAdapter { $0.headers["Authorization"] = "set by an adapter" }],
            authenticator: refresher, clock: TestClock())
        configuration.authorize = { request, credential in
            request.headers["Authorization"] = "Token \(credential.accessToken)"
        }
        let client = APIClient(baseURL: Kit.baseURL, configuration: configuration)
        try await client.send(APIRequest<Void>.get("/me"))
        #expect(transport.requests[0].headers["Authorization"] == "Token secret-access-0")
    }

    @Test func aRequestThatDoesNotRequireAuthenticationCarriesNoCredential() async throws {
        let transport = MockTransport.responding(status: 200)
        let issuer = Kit.Issuer(date: Kit.ManualDate())
        let client = Kit.makeClient(transport, refresher: Kit.refresher(Kit.credential(expiresIn: -1), issuer: issuer))
        var request = APIRequest<Void>.get("/public")
        request.requiresAuthentication = false
        try await client.send(request)
        #expect(transport.requests[0].headers["Authorization"] == nil)
        #expect(issuer.calls == 0)
    }

    @Test func aTokenThatIsNotAValidHeaderValueFailsWithoutPrintingIt() async throws {
        let transport = MockTransport.responding(status: 200)
        let issuer = Kit.Issuer(date: Kit.ManualDate())
        let client = Kit.makeClient(
            transport, refresher: Kit.refresher(Kit.credential("secret\r\nX: y"), issuer: issuer))
        let error = try await #require(throws: APIError.self) { try await client.send(APIRequest<Void>.get("/me")) }
        guard case .invalidRequest(.invalidHeaderValue(name: "Authorization")) = error else {
            Issue.record("expected invalidHeaderValue, got \(error)")
            return
        }
        #expect(!Kit.printed(error).contains(Kit.secret))
        #expect(transport.callCount == 0)
    }
}
