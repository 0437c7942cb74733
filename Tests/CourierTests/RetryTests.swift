import Foundation
import Testing

@testable import Courier

private let origin = URL(string: "https://api.example.com")!

private func makeClient(
    _ transport: MockTransport, clock: TestClock, policy: RetryPolicy = RetryPolicy(jitter: .none),
    now: Date = Date(timeIntervalSince1970: 1_700_000_000)
) -> APIClient {
    APIClient(
        baseURL: origin,
        configuration: .init(transport: transport, retryPolicy: policy, clock: clock, currentDate: { now }))
}

/// Advances the clock through each expected backoff, checking the client asked for exactly that delay.
private func advance(_ clock: TestClock, through delays: [Duration]) async {
    for delay in delays {
        await clock.waitForSleeper(of: delay)
        clock.advance(by: delay)
    }
}

@Suite(.timeLimit(.minutes(1))) struct RetryTests {
    @Test func twoServiceUnavailableThenSuccessTakesThreeAttempts() async throws {
        let clock = TestClock()
        let transport = MockTransport.sequence([.success(.text(503)), .success(.text(503)), .success(.text(200, "ok"))])
        let client = makeClient(transport, clock: clock)
        let response = Task { try await client.send(APIRequest<Data>.get("/flaky")) }
        await advance(clock, through: [.milliseconds(500), .seconds(1)])
        let result = try await response.value
        #expect(result.attempts == 3)
        #expect(result.value == Data("ok".utf8))
        #expect(transport.callCount == 3)
    }

    @Test func theLastFailureIsReturnedWhenAttemptsRunOut() async throws {
        let clock = TestClock()
        let transport = MockTransport.responding(status: 502, body: "bad gateway")
        let client = makeClient(transport, clock: clock)
        let response = Task { try await client.send(APIRequest<Void>.get("/down")) }
        await advance(clock, through: [.milliseconds(500), .seconds(1)])
        let error = try await #require(throws: APIError.self) { try await response.value }
        #expect(error.statusCode == 502)
        #expect(transport.callCount == 3)
    }

    @Test(arguments: [400, 401, 403, 404, 409, 422, 501])
    func permanentStatusesAreNotRetried(status: Int) async throws {
        let transport = MockTransport.responding(status: status)
        let client = makeClient(transport, clock: TestClock())
        await #expect(throws: APIError.self) { try await client.send(APIRequest<Void>.get("/")) }
        #expect(transport.callCount == 1)
    }

    @Test(arguments: [RequestMethod.post, .patch])
    func nonIdempotentMethodsAreNotRetried(method: RequestMethod) async throws {
        let transport = MockTransport.responding(status: 503)
        let client = makeClient(transport, clock: TestClock())
        let error = try await #require(throws: APIError.self) {
            try await client.send(APIRequest<Void>(method: method, path: "/orders"))
        }
        #expect(error.statusCode == 503)
        #expect(transport.callCount == 1)
    }

    @Test func anIdempotencyKeyMakesAPostRetryable() async throws {
        let clock = TestClock()
        let transport = MockTransport.sequence([.success(.text(503)), .success(.text(201))])
        let client = makeClient(transport, clock: clock)
        let response = Task {
            try await client.send(APIRequest<Void>.post("/orders", headers: ["Idempotency-Key": "abc"]))
        }
        await advance(clock, through: [.milliseconds(500)])
        #expect(try await response.value.attempts == 2)
    }

    @Test func retryAfterSecondsReplacesTheBackoff() async throws {
        let clock = TestClock()
        let transport = MockTransport.sequence([
            .success(.text(429, headers: ["Retry-After": "7"])), .success(.text(200)),
        ])
        let client = makeClient(transport, clock: clock)
        let response = Task { try await client.send(APIRequest<Void>.get("/limited")) }
        await advance(clock, through: [.seconds(7)])
        #expect(try await response.value.attempts == 2)
    }

    @Test func retryAfterHTTPDateIsMeasuredFromTheInjectedDate() async throws {
        let clock = TestClock()
        let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        let transport = MockTransport.sequence([
            .success(.text(503, headers: ["Retry-After": "Sun, 06 Nov 1994 08:49:49 GMT"])), .success(.text(200)),
        ])
        let client = makeClient(transport, clock: clock, now: now)
        let response = Task { try await client.send(APIRequest<Void>.get("/maintenance")) }
        await advance(clock, through: [.seconds(12)])
        #expect(try await response.value.attempts == 2)
    }

    @Test func aRetryAfterBeyondTheCapEndsTheRetries() async throws {
        let patient = MockTransport.sequence([.success(.text(503, headers: ["Retry-After": "3600"]))])
        let capped = makeClient(patient, clock: TestClock())
        let error = try await #require(throws: APIError.self) { try await capped.send(APIRequest<Void>.get("/")) }
        #expect(error.statusCode == 503)
        #expect(patient.callCount == 1)
    }

    @Test(arguments: [TransportFailure.timedOut, .cannotConnect, .connectionLost, .dnsFailure, .notConnected])
    func transientTransportFailuresAreRetried(failure: TransportFailure) async throws {
        let clock = TestClock()
        let transport = MockTransport.sequence([
            .failure(.transport(failure, underlying: URLError(.unknown))), .success(.text(200)),
        ])
        let client = makeClient(transport, clock: clock)
        let response = Task { try await client.send(APIRequest<Void>.get("/")) }
        await advance(clock, through: [.milliseconds(500)])
        #expect(try await response.value.attempts == 2)
    }

    @Test(arguments: [TransportFailure.secureConnectionFailed, .badServerResponse, .other])
    func permanentTransportFailuresAreNotRetried(failure: TransportFailure) async throws {
        let transport = MockTransport.sequence([.failure(.transport(failure, underlying: URLError(.unknown)))])
        let client = makeClient(transport, clock: TestClock())
        await #expect(throws: APIError.self) { try await client.send(APIRequest<Void>.get("/")) }
        #expect(transport.callCount == 1)
    }

    @Test func cancellingDuringBackoffEndsTheCallAtOnce() async throws {
        let clock = TestClock()
        let transport = MockTransport.responding(status: 503)
        let client = makeClient(transport, clock: clock)
        let task = Task { try await client.send(APIRequest<Void>.get("/")) }
        await clock.waitForSleeper(of: .milliseconds(500))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(transport.callCount == 1)
        #expect(!clock.pendingSleeps.contains(.milliseconds(500)))
        #expect(client.deadlines.pendingCount == 0)
    }

    // MARK: The policy on its own

    @Test func backoffDoublesAndIsCapped() {
        let policy = RetryPolicy(baseDelay: .milliseconds(500), maximumDelay: .seconds(30), jitter: .none)
        let delays = (1...9).map { policy.backoff(afterAttempt: $0) }
        #expect(
            delays == [
                .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30),
                .seconds(30), .seconds(30),
            ])
        #expect(policy.backoff(afterAttempt: 1_000) == .seconds(30))
    }

    @Test func fullJitterStaysWithinTheBackoffAndVaries() {
        let policy = RetryPolicy()
        let samples = (0..<200).map { _ in policy.backoff(afterAttempt: 3) }
        #expect(samples.allSatisfy { $0 >= .zero && $0 <= .seconds(2) })
        #expect(Set(samples).count > 100)
    }

    @Test func aCustomPolicyDecidesAndIsBoundedByMaxAttempts() async throws {
        let clock = TestClock()
        let transport = MockTransport.responding(status: 409)
        let asked = Locked(0)
        let policy = RetryPolicy.custom(maxAttempts: 3) { context in
            asked.withLock { $0 += 1 }
            return context.statusCode == 409 ? .retry(after: .milliseconds(10)) : .doNotRetry
        }
        let client = makeClient(transport, clock: clock, policy: policy)
        let response = Task { try await client.send(APIRequest<Void>.get("/conflict")) }
        await advance(clock, through: [.milliseconds(10), .milliseconds(10)])
        await #expect(throws: APIError.self) { try await response.value }
        #expect(transport.callCount == 3)
        #expect(asked.withLock { $0 } == 2)
    }

    @Test(arguments: [
        ("120", Duration.seconds(120)), ("0", .zero), (" 5 ", .seconds(5)),
        ("Sun, 06 Nov 1994 08:49:40 GMT", .seconds(3)), ("Sun, 06 Nov 1994 08:00:00 GMT", .zero),
    ])
    func retryAfterIsParsed(value: String, expected: Duration) {
        let now = Date(timeIntervalSince1970: 784_111_777)
        #expect(RetryAfter.delay(in: ["Retry-After": value], now: now) == expected)
    }

    @Test(arguments: ["", "soon", "-5", "1.5", "Sun, 31 Feb 1994 08:49:40 GMT"])
    func unreadableRetryAfterIsIgnored(value: String) {
        #expect(RetryAfter.delay(in: ["Retry-After": value], now: Date()) == nil)
    }

    @Test func anEnormousRetryAfterSaturatesInsteadOfOverflowing() {
        let delay = RetryAfter.delay(in: ["Retry-After": "99999999999999999999999"], now: Date())
        #expect(delay == .seconds(Int32.max))
    }
}
