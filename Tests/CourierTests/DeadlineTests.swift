import Foundation
import Testing

@testable import Courier

/// A transport that ignores cancellation and answers only when the test releases it: the worst case
/// for a deadline.
private final class Unresponsive: HTTPTransport {
    private let parked = Locked<[CheckedContinuation<Void, Never>]>([])

    var entered: Int { parked.withLock { $0.count } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        await withCheckedContinuation { continuation in parked.withLock { $0.append(continuation) } }
        return .text(200, "too late")
    }

    /// Lets every parked call finish, so no task outlives the test.
    func release() {
        for continuation in parked.withLock({ $0 }) { continuation.resume() }
    }
}

@Suite(.timeLimit(.minutes(1))) struct DeadlineTests {
    @Test func aStuckTransportTimesOutOnTheInjectedClock() async throws {
        let clock = TestClock()
        let transport = Unresponsive()
        defer { transport.release() }
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(transport: transport, retryPolicy: .never, clock: clock))
        let response = Task { try await client.send(APIRequest<Void>(path: "/slow", timeout: .milliseconds(250))) }
        await clock.waitForSleeper(of: .milliseconds(250))
        clock.advance(by: .milliseconds(249))
        #expect(clock.pendingSleeps == [.milliseconds(250)])
        clock.advance(by: .milliseconds(1))
        let error = try await #require(throws: APIError.self) { try await response.value }
        guard case .timedOut(let after) = error else {
            Issue.record("expected timedOut, got \(error)")
            return
        }
        #expect(after == .milliseconds(250))
        #expect(error.description == "The request timed out after 0.25 s.")
        #expect(transport.entered == 1)
    }

    @Test func aTimedOutAttemptIsRetriedLikeATransportTimeout() async throws {
        let clock = TestClock()
        let transport = MockTransport { _, index in
            if index == 0 { try await Task.sleep(for: .seconds(3600)) }
            return .text(200, "second")
        }
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(transport: transport, retryPolicy: RetryPolicy(jitter: .none), clock: clock))
        let response = Task { try await client.send(APIRequest<Data>(path: "/", timeout: .seconds(2))) }
        await clock.waitForSleeper(of: .seconds(2))
        clock.advance(by: .seconds(2))
        await clock.waitForSleeper(of: .milliseconds(500))
        clock.advance(by: .milliseconds(500))
        let result = try await response.value
        #expect(result.attempts == 2)
        #expect(result.value == Data("second".utf8))
    }

    @Test func cancellingACallToAStuckTransportReturnsAtOnce() async throws {
        let transport = Unresponsive()
        defer { transport.release() }
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(transport: transport, retryPolicy: .never, clock: TestClock()))
        let task = Task { try await client.send(APIRequest<Void>.get("/stuck")) }
        while transport.entered == 0 { await Task.yield() }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}
