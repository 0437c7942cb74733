import Foundation
import Testing

@testable import Courier

/// Extreme configuration values saturate instead of trapping: the reproductions from the robustness issue, through
/// a client on a manual clock (which, like a real clock, traps on a deadline it cannot represent).
@Suite(.timeLimit(.minutes(1))) struct SaturationTests {
    private static func client(_ transport: MockTransport, clock: TestClock, policy: RetryPolicy = .never) -> APIClient
    {
        APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(transport: transport, cache: nil, retryPolicy: policy, clock: clock))
    }

    @Test func aTimeoutOfInt64MaxSecondsNeverTrapsTheDeadlineTimer() async throws {
        let clock = TestClock()
        clock.advance(by: .seconds(1))  // a real clock's `now` is never zero
        let client = Self.client(MockTransport.responding(body: "ok"), clock: clock)

        let response = try await client.send(APIRequest<Data>(path: "/slow", timeout: .seconds(Int64.max)))
        await clock.waitForSleeper()  // the timer task sleeps towards the deadline after the call succeeded

        #expect(response.value == Data("ok".utf8))
        #expect(clock.pendingSleeps.allSatisfy { $0 <= Duration.saturationLimit })
        clock.advance(by: .seconds(86_400 * 365))
        #expect(try await client.send(APIRequest<Data>(path: "/slow", timeout: .seconds(Int64.max))).value.count == 2)
    }

    @Test func aTimeoutOfInt64MaxSecondsIsDescribedWithoutTrapping() {
        let description = APIError.timedOut(.seconds(Int64.max)).description
        #expect(description.contains("9.223372036854776e+18 s"))
        #expect(APIError.timedOut(.milliseconds(250)).description.contains("0.25 s"))
    }

    @Test func backoffAfterAttempt100WithAnHourBaseStaysAtTheCap() {
        let policy = RetryPolicy(baseDelay: .seconds(3600), maximumDelay: .seconds(7200), jitter: .none)
        #expect(policy.backoff(afterAttempt: 100) == .seconds(7200))
        #expect(policy.backoff(afterAttempt: .max) == .seconds(7200))
        #expect(policy.backoff(afterAttempt: .min) == .seconds(3600))
        let uncapped = RetryPolicy(baseDelay: .seconds(3600), maximumDelay: .seconds(Int64.max), jitter: .none)
        #expect(uncapped.backoff(afterAttempt: 100) == Duration.saturationLimit)
    }

    @Test func seventyAttemptsWithAOneMinuteBaseDelayNeverTrap() async throws {
        let clock = TestClock()
        let transport = MockTransport.responding(status: 503)
        let policy = RetryPolicy(
            maxAttempts: 70, baseDelay: .seconds(60), maximumDelay: .seconds(3600), jitter: .none)
        let client = Self.client(transport, clock: clock, policy: policy)

        // A 5-second timeout keeps the deadline timer's sleeps apart from the backoff's.
        let call = Task { try await client.send(APIRequest<Void>(path: "/down", timeout: .seconds(5))) }
        for attempt in 1..<70 {
            let delay: Duration = attempt <= 6 ? .seconds(60 << (attempt - 1)) : .seconds(3600)
            await clock.waitForSleeper(of: delay)
            clock.advance(by: delay)
        }

        let error = try await #require(throws: APIError.self) { try await call.value }
        #expect(error.statusCode == 503)
        #expect(transport.callCount == 70)
    }

    @Test func aCustomRetryDelayOfInt64MaxSecondsIsSaturated() {
        let policy = RetryPolicy.custom(maxAttempts: 2) { _ in .retry(after: .seconds(Int64.max)) }
        let negative = RetryPolicy.custom(maxAttempts: 2) { _ in .retry(after: .seconds(-5)) }
        let context = RetryContext(
            request: TransportRequest(method: .get, url: URL(string: "https://api.example.com")!), attempt: 1,
            outcome: .response(.text(503)), now: Date(timeIntervalSince1970: 0))
        #expect(policy.decision(for: context) == .retry(after: Duration.saturationLimit))
        #expect(negative.decision(for: context) == .retry(after: .zero))
    }

    @Test func aLeewayOfInt64MaxSecondsRenewsHalfway() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let expiry = now.addingTimeInterval(3600)
        let renewal = RefreshState.renewalDate(expiresAt: expiry, installedAt: now, leeway: .seconds(Int64.max) * 10)
        #expect(renewal == now.addingTimeInterval(1800))
        let negative = RefreshState.renewalDate(expiresAt: expiry, installedAt: now, leeway: .seconds(-60))
        #expect(negative == expiry)
    }
}
