import Foundation
import Testing

@testable import Courier

/// A transport that waits until it is cancelled and then throws `CancellationError`, as most transports do.
private final class CancelledOnlyTransport: HTTPTransport {
    func send(_ request: TransportRequest) async throws -> TransportResponse {
        try await Task.sleep(for: .seconds(3600))
        return .text(200, "never")
    }

    func stream(_ request: TransportRequest) async throws -> StreamedTransportResponse {
        try await Task.sleep(for: .seconds(3600))
        return StreamedTransportResponse(statusCode: 200)
    }
}

/// A transport that keeps its own deadline (as ``URLSessionTransport`` does, with ``TransportDeadline/onExpiry(_:)``)
/// by cancelling its exchange, which then throws `CancellationError`.
private struct ExpiringTransport: HTTPTransport {
    func send(_ request: TransportRequest) async throws -> TransportResponse {
        try await Task.sleep(for: .seconds(3600))
        return .text(200, "never")
    }

    func send(_ request: TransportRequest, deadline: TransportDeadline) async throws -> TransportResponse {
        let exchange = Task { try await send(request) }
        let registration = deadline.onExpiry { exchange.cancel() }
        defer { registration.cancel() }
        return try await exchange.value
    }
}

/// A deadline that passes is a timeout, whatever the transport throws when it is stopped: a caller nobody cancelled
/// never sees `CancellationError`, so the attempt counts as timed out, is retried as one, and a stream reconnects.
@Suite(.timeLimit(.minutes(1))) struct DeadlineOverCancellationTests {
    private static let calls = 200
    private static let timeout = Duration.milliseconds(5)

    private func client(_ transport: any HTTPTransport, clock: TestClock) -> APIClient {
        APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(
                transport: transport, cache: nil, retryPolicy: .never, timeout: Self.timeout, clock: clock))
    }

    /// Moves the clock past every call's deadline once all `calls` of them are waiting.
    private func expire(_ client: APIClient, clock: TestClock, calls: Int) async {
        while client.deadlines.pendingCount < calls { await Task.yield() }
        clock.advance(by: Self.timeout)
    }

    private enum Outcome: Equatable { case timedOut, cancelled, other(String) }

    private static func outcome(of error: any Error) -> Outcome {
        switch error {
        case APIError.timedOut: .timedOut
        case is CancellationError: .cancelled
        default: .other("\(error)")
        }
    }

    @Test func everyCallWhoseDeadlinePassesTimesOutNeverCancelled() async throws {
        let clock = TestClock()
        let client = client(CancelledOnlyTransport(), clock: clock)
        let outcomes = await withTaskGroup(of: Outcome.self) { group in
            for index in 0..<Self.calls {
                group.addTask {
                    do {
                        _ = try await client.send(APIRequest<Data>.get("/calls/\(index)"))
                        return .other("succeeded")
                    } catch {
                        return Self.outcome(of: error)
                    }
                }
            }
            await expire(client, clock: clock, calls: Self.calls)
            return await group.reduce(into: [Outcome]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == .cancelled }.count == 0)
        #expect(outcomes.filter { $0 == .timedOut }.count == Self.calls)
    }

    @Test func everyStreamWhoseHeadDeadlinePassesTimesOutNeverCancelled() async throws {
        let clock = TestClock()
        let client = client(CancelledOnlyTransport(), clock: clock)
        let outcomes = await withTaskGroup(of: Outcome.self) { group in
            for index in 0..<Self.calls {
                group.addTask {
                    do {
                        _ = try await client.stream(APIRequest<Data>.get("/streams/\(index)"))
                        return .other("succeeded")
                    } catch {
                        return Self.outcome(of: error)
                    }
                }
            }
            await expire(client, clock: clock, calls: Self.calls)
            return await group.reduce(into: [Outcome]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == .cancelled }.count == 0)
        #expect(outcomes.filter { $0 == .timedOut }.count == Self.calls)
    }

    @Test func aTransportStoppedByItsOwnDeadlineTimesOut() async throws {
        let clock = TestClock()
        let client = client(ExpiringTransport(), clock: clock)
        let outcomes = await withTaskGroup(of: Outcome.self) { group in
            for index in 0..<Self.calls {
                group.addTask {
                    do {
                        _ = try await client.send(APIRequest<Data>.get("/own/\(index)"))
                        return .other("succeeded")
                    } catch {
                        return Self.outcome(of: error)
                    }
                }
            }
            await expire(client, clock: clock, calls: Self.calls)
            return await group.reduce(into: [Outcome]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == .cancelled }.count == 0)
        #expect(outcomes.filter { $0 == .timedOut }.count == Self.calls)
    }

    @Test func theRetryPolicyIsAskedAboutATimedOutAttempt() async throws {
        let clock = TestClock()
        let asked = Locked<[String]>([])
        let policy = RetryPolicy.custom(maxAttempts: 2) { context in
            if case .failure(let error) = context.outcome { asked.withLock { $0.append("\(error)") } }
            return .doNotRetry
        }
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(
                transport: ExpiringTransport(), cache: nil, retryPolicy: policy, timeout: Self.timeout,
                clock: clock))
        let call = Task { try await client.send(APIRequest<Data>.get("/retried")) }
        await expire(client, clock: clock, calls: 1)
        let error = await #expect(throws: (any Error).self) { try await call.value }
        #expect(error.map(Self.outcome) == .timedOut)
        #expect(asked.withLock { $0 } == ["\(APIError.timedOut(Self.timeout))"])
    }

    @Test func aCancelledCallerStillGetsCancellation() async throws {
        let clock = TestClock()
        let client = client(CancelledOnlyTransport(), clock: clock)
        let call = Task { try await client.send(APIRequest<Data>.get("/left")) }
        while client.deadlines.pendingCount < 1 { await Task.yield() }
        call.cancel()
        let error = await #expect(throws: (any Error).self) { try await call.value }
        #expect(error.map(Self.outcome) == .cancelled)
    }
}
