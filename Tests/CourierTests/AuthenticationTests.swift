import Foundation
import Testing

@testable import Courier

private typealias Kit = AuthTestKit
private typealias Gate = CoalescerTestKit.Gate
private typealias Echo = AuthTestKit.Echo

/// How many times the transport was sent each call, told apart by their `X-Call` header.
private func sendsPerCall(_ transport: MockTransport) -> [String: Int] {
    transport.requests.reduce(into: [:]) { counts, request in
        counts[request.headers["X-Call"] ?? "?", default: 0] += 1
    }
}

/// The client and its ``TokenRefresher`` under load: one refresh for a storm of 401s or an expired token,
/// one resend per request, clear failures, and never a loop.
@Suite(.timeLimit(.minutes(1))) struct AuthenticationTests {
    @Test(arguments: [false, true])
    func aThousandRequestsWithAnExpiredTokenRefreshOnceAndAllSucceed(coalescing: Bool) async throws {
        let gate = Gate()
        let issuer = Kit.Issuer(gate: gate, date: Kit.ManualDate())
        let refresher = Kit.refresher(Kit.credential(expiresIn: -1), issuer: issuer)
        let freshGate = Gate()
        let transport = Kit.tokenCheckingTransport(freshGate: freshGate)
        let client = Kit.makeClient(transport, refresher: refresher, coalescing: coalescing)
        let calls = (0..<1_000).map { _ in Task { try await client.send(APIRequest<Echo>.get("/me")) } }
        let waiting = await CoalescerTestKit.eventually { await refresher.waiterCount == 1_000 }
        try #require(waiting)
        await gate.open()
        // Hold the sends until every caller is on the wire or in the flight, so none can start a second one.
        if coalescing {
            try await CoalescerTestKit.waitForWaiters(1_000, on: client.coalescer)
        } else {
            #expect(await CoalescerTestKit.eventually { transport.callCount == 1_000 })
        }
        await freshGate.open()
        for call in calls { #expect(try await call.value.value == Echo(token: "secret-access-1")) }
        #expect(issuer.calls == 1)
        // Renewed before sending: no request ever carried the expired token.
        #expect(transport.callCount == (coalescing ? 1 : 1_000))
        #expect(transport.requests.allSatisfy { $0.headers["Authorization"] == "Bearer secret-access-1" })
    }

    @Test(arguments: [false, true])
    func aThousandRequestsRejectedWithA401RefreshOnceAndResendOnce(coalescing: Bool) async throws {
        let staleGate = Gate()
        let issuer = Kit.Issuer(date: Kit.ManualDate())
        // No expiry: the client cannot know the token is dead until the server says so.
        let refresher = Kit.refresher(Kit.credential(expiresIn: nil), issuer: issuer)
        let transport = Kit.tokenCheckingTransport(staleGate: staleGate)
        let client = Kit.makeClient(transport, refresher: refresher, coalescing: coalescing)
        let calls = (0..<1_000).map { index in
            Task { try await client.send(APIRequest<Echo>.get("/me", headers: ["X-Call": "\(index)"])) }
        }
        // Every first send is on the wire with the stale token before any 401 comes back.
        let firstSends = coalescing ? 1 : 1_000
        let sent = await CoalescerTestKit.eventually { transport.callCount == firstSends }
        try #require(sent)
        if coalescing { try await CoalescerTestKit.waitForWaiters(1_000, on: client.coalescer) }
        await staleGate.open()
        for call in calls {
            let response = try await call.value
            #expect(response.value == Echo(token: "secret-access-1"))
            #expect(response.attempts == 2)
        }
        #expect(issuer.calls == 1)
        #expect(await refresher.refreshCount == 1)
        #expect(transport.callCount == 2 * firstSends)
        #expect(sendsPerCall(transport).values.allSatisfy { $0 == 2 })
    }

    @Test func aFailingRefreshUnderLoadFailsEveryRequestOnceAndClearly() async throws {
        let gate = Gate()
        let issuer = Kit.Issuer(gate: gate, fails: true, date: Kit.ManualDate())
        let refresher = Kit.refresher(Kit.credential(expiresIn: -1), issuer: issuer)
        let transport = Kit.tokenCheckingTransport()
        let client = Kit.makeClient(transport, refresher: refresher, coalescing: false)
        let calls = (0..<1_000).map { _ in Task { try await client.send(APIRequest<Echo>.get("/me")) } }
        let waiting = await CoalescerTestKit.eventually { await refresher.waiterCount == 1_000 }
        try #require(waiting)
        await gate.open()
        var failures = 0
        for call in calls {
            do {
                _ = try await call.value
            } catch {
                if case .refreshThrew(let cause) = Kit.authenticationFailure(error), cause is Kit.EndpointDown {
                    failures += 1
                }
            }
        }
        #expect(failures == 1_000)
        #expect(issuer.calls == 1)
        #expect(transport.callCount == 0)

        // The credential had only expired, so the failure does not stick: the next call refreshes again (one refresh
        // for one call, within the refresh limit), and fails the same way while the endpoint is down; a login ends it.
        let error = try await #require(throws: APIError.self) { try await client.send(APIRequest<Echo>.get("/me")) }
        #expect(error.underlyingError is Kit.EndpointDown)
        #expect(issuer.calls == 2)
        #expect(transport.callCount == 0)
        await refresher.setCredential(Kit.credential("secret-access-9"))
        #expect(try await client.send(APIRequest<Echo>.get("/me")).value == Echo(token: "secret-access-9"))
        #expect(issuer.calls == 2)
    }

    @Test func aFailedEarlyRenewalKeepsSendingTheStillValidToken() async throws {
        let date = Kit.ManualDate()
        let issuer = Kit.Issuer(fails: true, date: date)
        let refresher = Kit.refresher(Kit.credential(expiresIn: 120), issuer: issuer, leeway: .seconds(60))
        // The server still accepts the old token, which has 50 s left.
        let transport = MockTransport { request, _ in
            .text(200, #"{"token":"\#(request.headers["Authorization"]?.dropFirst("Bearer ".count) ?? "")"}"#)
        }
        let client = Kit.makeClient(transport, refresher: refresher, coalescing: false)
        date.advance(by: 70)
        for _ in 0..<10 {
            #expect(try await client.send(APIRequest<Echo>.get("/me")).value == Echo(token: "secret-access-0"))
        }
        #expect(issuer.calls == 1)
        #expect(transport.callCount == 10)
    }

    @Test func aCallWhoseRefreshNeverAnswersFailsAtTheRefreshTimeoutAndReportsIt() async throws {
        let clock = TestClock()
        let issuer = Kit.Issuer(gate: Gate(), date: Kit.ManualDate())
        let refresher = Kit.refresher(
            Kit.credential(expiresIn: -1), issuer: issuer, clock: clock, refreshTimeout: .seconds(10))
        let client = Kit.makeClient(Kit.tokenCheckingTransport(), refresher: refresher)
        let events = client.events
        let call = Task { try await client.send(APIRequest<Echo>.get("/me")) }
        try await Kit.waitForTimer(.seconds(10), on: clock)
        clock.advance(by: .seconds(10))
        let error = try await #require(throws: APIError.self) { try await call.value }
        guard case .refreshTimedOut(.seconds(10)) = Kit.authenticationFailure(error) else {
            Issue.record("expected refreshTimedOut, got \(error)")
            return
        }
        let reason =
            "Authentication failed: the credential's refresh did not finish within 10 s, so it was cancelled "
            + "(the next request tries again)."
        let kinds = await EventTestKit.collect(events, from: client.eventLog).map(\.kind)
        #expect(
            kinds.filter { if case .tokenRefreshFailed = $0 { true } else { false } } == [
                .tokenRefreshFailed(reason: reason)
            ])
        #expect(issuer.calls == 1)
    }

    @Test func a401ForATokenAlreadyReplacedResendsWithoutRefreshing() async throws {
        let staleGate = Gate()
        let issuer = Kit.Issuer(date: Kit.ManualDate())
        let refresher = Kit.refresher(Kit.credential(expiresIn: nil), issuer: issuer)
        let transport = Kit.tokenCheckingTransport(staleGate: staleGate)
        let client = Kit.makeClient(transport, refresher: refresher)
        let call = Task { try await client.send(APIRequest<Echo>.get("/me")) }
        #expect(await CoalescerTestKit.eventually { transport.callCount == 1 })
        // Another part of the app renews the token while the request is on the wire with the old one.
        let stale = try #require(await refresher.credential)
        _ = try await refresher.refresh(rejected: stale)
        await staleGate.open()
        let response = try await call.value
        #expect(response.value == Echo(token: "secret-access-1"))
        #expect(response.attempts == 2)
        #expect(issuer.calls == 1)
    }

    @Test func aSecondUnauthorizedFailsWithoutALoop() async throws {
        let issuer = Kit.Issuer(date: Kit.ManualDate())
        let refresher = Kit.refresher(Kit.credential(), issuer: issuer)
        let transport = MockTransport.responding(status: 401, body: #"{"error":"invalid_token"}"#)
        let client = Kit.makeClient(transport, refresher: refresher, retryPolicy: .default)
        let error = try await #require(throws: APIError.self) { try await client.send(APIRequest<Echo>.get("/me")) }
        guard case .unauthorized(let response) = error else {
            Issue.record("expected unauthorized, got \(error)")
            return
        }
        #expect(response.statusCode == 401)
        #expect(error.statusCode == 401)
        #expect(transport.callCount == 2)
        #expect(issuer.calls == 1)
        #expect(!Kit.printed(error).contains(Kit.secret))
    }

    @Test func a401WithoutAnAuthenticatorIsUnauthorized() async throws {
        let transport = MockTransport.responding(status: 401)
        let client = Kit.makeClient(transport, refresher: nil, retryPolicy: .default)
        let error = try await #require(throws: APIError.self) { try await client.send(APIRequest<Echo>.get("/me")) }
        guard case .unauthorized = error else {
            Issue.record("expected unauthorized, got \(error)")
            return
        }
        #expect(transport.callCount == 1)
        #expect(transport.requests[0].headers["Authorization"] == nil)
    }

    @Test func aServerRejectingEveryNewTokenHitsTheRefreshLimitInsteadOfLooping() async throws {
        let issuer = Kit.Issuer(date: Kit.ManualDate())
        let refresher = Kit.refresher(Kit.credential(), issuer: issuer)
        let transport = MockTransport.responding(status: 401)
        let client = Kit.makeClient(transport, refresher: refresher)
        for _ in 0..<5 {
            await #expect(throws: APIError.self) { try await client.send(APIRequest<Echo>.get("/me")) }
        }
        let error = try await #require(throws: APIError.self) { try await client.send(APIRequest<Echo>.get("/me")) }
        guard case .tooManyRefreshes(count: 5, window: .seconds(30)) = Kit.authenticationFailure(error) else {
            Issue.record("expected tooManyRefreshes, got \(error)")
            return
        }
        #expect(issuer.calls == 5)
        #expect(transport.callCount == 5 * 2 + 1)
    }

    @Test func theResendAfterARefreshDoesNotUseUpTheRetryPolicy() async throws {
        let clock = TestClock()
        let issuer = Kit.Issuer(date: Kit.ManualDate())
        let refresher = Kit.refresher(Kit.credential(expiresIn: nil), issuer: issuer)
        let transport = MockTransport { request, index in
            switch index {
            case 0: .text(401)
            case 1: .text(503)
            default: .text(200, #"{"token":"\#(request.headers["Authorization"] ?? "")"}"#)
            }
        }
        let policy = RetryPolicy(maxAttempts: 2, jitter: .none)
        let client = Kit.makeClient(transport, refresher: refresher, retryPolicy: policy, clock: clock)
        let call = Task { try await client.send(APIRequest<Echo>.get("/me")) }
        await clock.waitForSleeper(of: .milliseconds(500))
        clock.advance(by: .milliseconds(500))
        let response = try await call.value
        #expect(response.attempts == 3)
        #expect(response.value == Echo(token: "Bearer secret-access-1"))
        #expect(issuer.calls == 1)
    }

    @Test func cancellingTheCallerThatTriggeredTheRefreshLeavesTheOthersToSucceed() async throws {
        let gate = Gate()
        let issuer = Kit.Issuer(gate: gate, date: Kit.ManualDate())
        let refresher = Kit.refresher(Kit.credential(expiresIn: -1), issuer: issuer)
        let transport = Kit.tokenCheckingTransport()
        let client = Kit.makeClient(transport, refresher: refresher, coalescing: false)
        let trigger = Task { try await client.send(APIRequest<Echo>.get("/me")) }
        #expect(await CoalescerTestKit.eventually { await refresher.waiterCount == 1 })
        let others = (0..<9).map { _ in Task { try await client.send(APIRequest<Echo>.get("/me")) } }
        #expect(await CoalescerTestKit.eventually { await refresher.waiterCount == 10 })
        trigger.cancel()
        #expect(await CoalescerTestKit.endedInCancellation(trigger))
        await gate.open()
        for other in others { #expect(try await other.value.value == Echo(token: "secret-access-1")) }
        #expect(issuer.calls == 1)
        #expect(issuer.cancellations == 0)
        #expect(transport.callCount == 9)
    }
}
