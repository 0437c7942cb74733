import CourierTesting
import Foundation
import Synchronization
import Testing

@testable import Courier

@Suite("A hedged attempt sends a copy after the delay; the first answer wins and the rest are cancelled")
struct HedgedRequestTests {
    @Test func theSecondCopyWinsAndTheFirstIsCancelled() async throws {
        let clock = ManualClock()
        let firstCancelled = Atomic(false)
        let transport = StubTransport { _, index in
            guard index == 0 else { return .text(200, "copy") }
            do {
                try await Task.sleep(for: .seconds(3_600))  // until cancelled; no test waits for it
            } catch {
                firstCancelled.store(true, ordering: .relaxed)
                throw error
            }
            return .text(200, "first")
        }
        var configuration = APIClient.Configuration(transport: transport, cache: nil, retryPolicy: .never, clock: clock)
        configuration.resilience.hedging = HedgingPolicy(delay: .fixed(.milliseconds(100)), maxCopies: 3)
        let client = APIClient(baseURL: URL(string: "https://api.test")!, configuration: configuration)
        let call = Task { try await client.send(APIRequest<Data>.get("/slow")) }
        await clock.waitForSleeper(of: .milliseconds(100))
        clock.advance(by: .milliseconds(100))
        let response = try await call.value
        #expect(String(decoding: response.value, as: UTF8.self) == "copy")
        let cancelled = firstCancelled.load(ordering: .relaxed)
        #expect(cancelled)
        #expect(transport.requests.count == 2)  // the third copy was never due
        #expect(client.metrics.hedgesSent == 1)
        #expect(client.metrics.hedgesWon == 1)
        #expect(client.metrics.upstreamCalls == 2)
    }

    @Test func aRequestHedgesOnItsOwnOnAClientThatDoesNot() async throws {
        let clock = ManualClock()
        let transport = StubTransport { _, index in
            guard index == 0 else { return .text(200, "copy") }
            try await Task.sleep(for: .seconds(3_600))  // until cancelled
            return .text(200, "first")
        }
        let configuration = APIClient.Configuration(
            transport: transport, cache: nil, retryPolicy: .never, clock: clock)
        #expect(configuration.resilience.hedging == nil, "the client does not hedge")
        let client = APIClient(baseURL: URL(string: "https://api.test")!, configuration: configuration)
        var request = APIRequest<Data>.get("/slow")
        request.hedging = HedgingPolicy(delay: .fixed(.milliseconds(50)))
        let call = Task { try await client.send(request) }
        await clock.waitForSleeper(of: .milliseconds(50))
        clock.advance(by: .milliseconds(50))

        let response = try await call.value

        #expect(String(decoding: response.value, as: UTF8.self) == "copy")
        #expect(transport.requests.count == 2)
        #expect(client.metrics.hedgesSent == 1)
    }

    @Test func aStreamedCallIsNeverHedged() async throws {
        let clock = ManualClock()
        let release = AsyncStream<Void>.makeStream()
        let transport = StubTransport { _ in
            for await _ in release.stream { break }
            return .text(200, "ok")
        }
        var configuration = APIClient.Configuration(transport: transport, cache: nil, retryPolicy: .never, clock: clock)
        configuration.resilience.hedging = HedgingPolicy(delay: .fixed(.milliseconds(100)))
        let client = APIClient(baseURL: URL(string: "https://api.test")!, configuration: configuration)
        let call = Task { try await client.stream(APIRequest<Data>.get("/slow")) }
        while transport.requests.count < 1 { await Task.yield() }
        for _ in 0..<200 { await Task.yield() }

        #expect(!clock.pendingSleeps.contains(.milliseconds(100)), "no hedge timer for a stream")
        release.continuation.yield()
        _ = try await call.value
        #expect(transport.requests.count == 1)
        #expect(client.metrics.hedgesSent == 0)
    }

    @Test func aCopyIsNotSentWhenTheBudgetIsSpent() async throws {
        let clock = ManualClock()
        let release = AsyncStream<Void>.makeStream()
        let transport = StubTransport { _ in
            for await _ in release.stream { break }
            return .text(200, "ok")
        }
        var configuration = APIClient.Configuration(transport: transport, cache: nil, retryPolicy: .never, clock: clock)
        configuration.resilience.retryBudget = .init(window: .seconds(10), ratio: 0, minimumPerSecond: 0)
        configuration.resilience.hedging = HedgingPolicy(delay: .fixed(.milliseconds(100)))
        let client = APIClient(baseURL: URL(string: "https://api.test")!, configuration: configuration)
        let call = Task { try await client.send(APIRequest<Void>.get("/slow")) }
        await clock.waitForSleeper(of: .milliseconds(100))
        clock.advance(by: .milliseconds(100))
        while clock.pendingSleeps.contains(.milliseconds(100)) { await Task.yield() }
        release.continuation.yield()
        _ = try await call.value
        #expect(transport.requests.count == 1)
        #expect(client.metrics.hedgesSent == 0)
    }

    @Test func anOriginWithRecentFailuresIsNotHedged() async throws {
        let clock = ManualClock()
        let release = AsyncStream<Void>.makeStream()
        let transport = StubTransport { request, _ in
            if request.url.path == "/fails" { return .text(503) }
            for await _ in release.stream { break }
            return .text(200, "ok")
        }
        var configuration = APIClient.Configuration(transport: transport, cache: nil, retryPolicy: .never, clock: clock)
        configuration.resilience.hedging = HedgingPolicy(delay: .fixed(.milliseconds(100)))
        let client = APIClient(baseURL: URL(string: "https://api.test")!, configuration: configuration)
        await #expect(throws: APIError.self) { try await client.send(APIRequest<Void>.get("/fails")) }
        let call = Task { try await client.send(APIRequest<Void>.get("/slow")) }
        while transport.requests.count < 2 { await Task.yield() }
        // A hedge's timer is armed as its first copy starts; give it every chance to show up.
        for _ in 0..<200 { await Task.yield() }
        #expect(!clock.pendingSleeps.contains(.milliseconds(100)))
        clock.advance(by: .milliseconds(100))
        release.continuation.yield()
        _ = try await call.value
        #expect(transport.requests.count == 2)
        #expect(client.metrics.hedgesSent == 0)
    }

    @Test func onlyRequestsTheRetryPolicyMaySendTwiceAreHedged() async throws {
        // Hedges, retries and event-stream reconnections share the one rule: `RetryPolicy.mayResend`.
        let url = URL(string: "https://api.test/orders")!
        #expect(!RetryPolicy.default.mayResend(TransportRequest(method: .post, url: url)))
        #expect(
            RetryPolicy.default.mayResend(
                TransportRequest(method: .post, url: url, headers: ["Idempotency-Key": "order-42"])))
        // A hedging client hedges a PUT under the default policy, and not under one that resends only GETs.
        #expect(try await Self.hedgesOfAPut(under: .default) == 1)
        #expect(try await Self.hedgesOfAPut(under: RetryPolicy(idempotentMethods: [.get])) == 0)
    }

    /// Sends a `PUT` whose first attempt never answers through a client hedging after 50 ms, under `policy`: the hedges
    /// it sent (the call is cancelled when none is scheduled).
    private static func hedgesOfAPut(under policy: RetryPolicy) async throws -> Int {
        let clock = ManualClock()
        let transport = StubTransport { _, index in
            guard index == 0 else { return .text(200, "copy") }
            try await Task.sleep(for: .seconds(3_600))  // until cancelled
            return .text(200, "first")
        }
        var configuration = APIClient.Configuration(transport: transport, cache: nil, retryPolicy: policy, clock: clock)
        configuration.resilience.hedging = HedgingPolicy(delay: .fixed(.milliseconds(50)))
        let client = APIClient(baseURL: URL(string: "https://api.test")!, configuration: configuration)
        let call = Task { try await client.send(APIRequest<Data>.put("/orders/42", body: Data("{}".utf8))) }
        while transport.requests.isEmpty { await Task.yield() }
        for _ in 0..<200 { await Task.yield() }
        if clock.pendingSleeps.contains(.milliseconds(50)) {
            clock.advance(by: .milliseconds(50))
            #expect(String(decoding: try await call.value.value, as: UTF8.self) == "copy")
        } else {
            call.cancel()
            _ = try? await call.value
        }
        return client.metrics.hedgesSent
    }

    @Test func anAdaptiveDelayIsThePercentileOfRecentLatencies() {
        var window = LatencyWindow()
        let policy = HedgingPolicy.Delay.percentile(0.95, minimum: .milliseconds(1), maximum: .seconds(1))
        for milliseconds in 1...19 { window.record(.milliseconds(milliseconds)) }
        #expect(window.delay(for: policy) == .seconds(1))  // too few samples: the maximum
        for milliseconds in 20...100 { window.record(.milliseconds(milliseconds)) }
        #expect(window.delay(for: policy) == .milliseconds(96))  // rank ⌈0.95 × 99⌉ = 95 of 1…100 ms
    }
}
