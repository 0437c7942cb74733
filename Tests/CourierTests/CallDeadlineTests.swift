import Foundation
import Testing

@testable import Courier

/// Every caller's own deadline holds: a joiner leaves a slower flight, a refresh wait ends by the caller's timeout,
/// and a retry delay never outlasts the whole call.
@Suite(.timeLimit(.minutes(1))) struct CallDeadlineTests {
    private static let baseURL = URL(string: "https://api.example.com")!

    @Test func aRetryAfterLongerThanTheCallIsNotWaitedFor() async throws {
        let clock = TestClock()
        let transport = MockTransport { _, _ in .text(503, headers: ["Retry-After": "3"]) }
        let client = APIClient(
            baseURL: Self.baseURL,
            configuration: .init(
                transport: transport, cache: nil, retryPolicy: RetryPolicy(jitter: .none), clock: clock))
        var request = APIRequest<Data>(path: "/busy", timeout: .milliseconds(200))
        request.callTimeout = .seconds(2)

        // No clock advance: a sleep of 3 s would hang here until the time limit.
        let error = try await #require(throws: APIError.self) { try await client.send(request) }

        #expect(error.statusCode == 503)
        #expect(transport.callCount == 1)
        ReliabilityKit.record(
            "deadlines", "503 with Retry-After: 3 and a 2 s callTimeout", cases: 1,
            outcome: "no sleep past the call's deadline: the 503 returned at once")
        #expect(clock.pendingSleeps.allSatisfy { $0 < .seconds(3) })
    }

    @Test func aRetryInsideTheCallDeadlineIsStillMade() async throws {
        let clock = TestClock()
        let transport = MockTransport { _, index in
            index == 0 ? .text(503, headers: ["Retry-After": "1"]) : .text(200, "ok")
        }
        let client = APIClient(
            baseURL: Self.baseURL,
            configuration: .init(
                transport: transport, cache: nil, retryPolicy: RetryPolicy(jitter: .none), clock: clock))
        var request = APIRequest<Data>(path: "/busy")
        request.callTimeout = .seconds(5)
        let call = Task { try await client.send(request) }
        await clock.waitForSleeper(of: .seconds(1))
        clock.advance(by: .seconds(1))

        #expect(try await call.value.attempts == 2)
    }

    @Test func aRefreshThatNeverAnswersEndsAtTheCallersTimeout() async throws {
        let clock = TestClock()
        let gate = CoalescerTestKit.Gate()
        let refresher = TokenRefresher(credential: nil) { _ in
            _ = await gate.wait()
            return Credential(accessToken: "late", identity: "alice")
        }
        let transport = MockTransport { _, _ in .text(200, "ok") }
        let client = APIClient(
            baseURL: Self.baseURL,
            configuration: .init(
                transport: transport, cache: nil, retryPolicy: .never, authenticator: refresher, clock: clock))
        let call = Task { try await client.send(APIRequest<Data>(path: "/me", timeout: .milliseconds(200))) }
        await clock.waitForSleeper(of: .milliseconds(200))

        clock.advance(by: .milliseconds(200))

        let error = try await #require(throws: APIError.self) { try await call.value }
        guard case .timedOut = error else {
            Issue.record("expected timedOut, got \(error)")
            return
        }
        #expect(transport.callCount == 0)
        ReliabilityKit.record(
            "deadlines", "a token refresh that never answers, 200 ms request timeout", cases: 1,
            outcome: "timedOut at 200 ms on the clock; nothing sent; the refresh went on")
        await gate.open()
    }
}
