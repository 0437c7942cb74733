import CourierTesting
import Foundation
import Synchronization
import Testing

@testable import Courier

@Suite("A circuit breaker opens on a failure ratio, fails fast, and probes once")
struct CircuitBreakerTests {
    private static let settings = CircuitBreaker.Configuration(
        failureRatio: 0.5, samplingDuration: .seconds(10), minimumThroughput: 4, breakDuration: .seconds(5), probes: 1)

    @Test func opensAtTheRatioOnceTheMinimumThroughputIsReached() {
        let clock = ManualClock()
        let breaker = CircuitBreaker(Self.settings, clock: clock)
        breaker.record(.failure)
        breaker.record(.failure)
        breaker.record(.failure)
        #expect(breaker.phase == .closed)  // three calls: below the minimum
        breaker.record(.success)
        #expect(breaker.phase == .open)  // four calls, three failed
        #expect(breaker.admit() == .rejected(retryAfter: .seconds(5)))
        clock.advance(by: .seconds(3))
        #expect(breaker.admit() == .rejected(retryAfter: .seconds(2)))
    }

    @Test func failuresOutsideTheWindowDoNotCount() {
        let clock = ManualClock()
        let breaker = CircuitBreaker(Self.settings, clock: clock)
        breaker.record(.failure)
        breaker.record(.failure)
        clock.advance(by: .seconds(10))
        breaker.record(.failure)
        breaker.record(.success)
        breaker.record(.success)
        #expect(breaker.phase == .closed)  // 1 failure of the 3 calls in the window
    }

    @Test func halfOpenLetsOneProbeThroughAndClosesOnItsSuccess() {
        let clock = ManualClock()
        let breaker = CircuitBreaker(Self.settings, clock: clock)
        for _ in 0..<4 { breaker.record(.failure) }
        clock.advance(by: .seconds(5))
        #expect(breaker.admit() == .probe)
        #expect(breaker.phase == .halfOpen)
        #expect(breaker.admit() == .rejected(retryAfter: .zero))
        breaker.record(.success)  // a call admitted before: not the probe, does not decide
        #expect(breaker.phase == .halfOpen)
        breaker.record(.success, probe: true)
        #expect(breaker.phase == .closed)
        #expect(breaker.admit() == .allowed)
    }

    @Test func aFailedProbeOpensAgainForAWholeBreak() {
        let clock = ManualClock()
        let breaker = CircuitBreaker(Self.settings, clock: clock)
        for _ in 0..<4 { breaker.record(.failure) }
        clock.advance(by: .seconds(6))
        #expect(breaker.admit() == .probe)
        breaker.record(.failure, probe: true)
        #expect(breaker.phase == .open)
        #expect(breaker.admit() == .rejected(retryAfter: .seconds(5)))
    }

    @Test func anAbandonedProbeGivesItsPlaceToTheNextCaller() {
        let clock = ManualClock()
        let breaker = CircuitBreaker(Self.settings, clock: clock)
        for _ in 0..<4 { breaker.record(.failure) }
        clock.advance(by: .seconds(5))
        #expect(breaker.admit() == .probe)
        breaker.abandonProbe()
        #expect(breaker.admit() == .probe)
    }

    @Test func exactlyOneOfAThousandConcurrentCallersProbes() async {
        let clock = ManualClock()
        let breaker = CircuitBreaker(Self.settings, clock: clock)
        for _ in 0..<4 { breaker.record(.failure) }
        clock.advance(by: .seconds(5))
        let admissions = await withTaskGroup(of: CircuitBreaker.Admission.self) { group in
            for _ in 0..<1_000 { group.addTask { breaker.admit() } }
            var all: [CircuitBreaker.Admission] = []
            for await admission in group { all.append(admission) }
            return all
        }
        #expect(admissions.filter { $0 == .probe }.count == 1)
        #expect(admissions.filter { $0 == .rejected(retryAfter: .zero) }.count == 999)
    }

    @Test func aClientFailsFastWhileTheOriginIsDownAndRecoversThroughOneProbe() async throws {
        let clock = ManualClock()
        let healthy = Atomic(false)
        let transport = StubTransport { _ in healthy.load(ordering: .relaxed) ? .text(200, "ok") : .text(503) }
        var configuration = APIClient.Configuration(
            transport: transport, cache: nil, retryPolicy: .never, clock: clock)
        configuration.resilience = Resilience(retryBudget: nil, circuitBreaker: Self.settings)
        let client = APIClient(baseURL: URL(string: "https://api.test")!, configuration: configuration)
        for index in 0..<4 {
            await #expect(throws: APIError.self) { try await client.send(APIRequest<Void>.get("/\(index)")) }
        }
        for index in 0..<10 {
            do {
                try await client.send(APIRequest<Void>.get("/open/\(index)"))
                Issue.record("sent while open")
            } catch APIError.circuitOpen(let origin, let retryAfter) {
                #expect(origin == "https://api.test:443")
                #expect(retryAfter == .seconds(5))
            }
        }
        #expect(transport.requests.count == 4)
        healthy.store(true, ordering: .relaxed)
        clock.advance(by: .seconds(5))
        try await client.send(APIRequest<Void>.get("/probe"))
        try await client.send(APIRequest<Void>.get("/after"))
        #expect(transport.requests.count == 6)
        #expect(client.metrics.circuitStateChanges == 3)  // open, half-open, closed
        #expect(client.metrics.circuitRejections == 10)
    }

    @Test func clientErrorsAreNotFailures() async throws {
        let transport = StubTransport.responding(status: 404)
        var configuration = APIClient.Configuration(transport: transport, cache: nil, retryPolicy: .never)
        configuration.resilience = Resilience(retryBudget: nil, circuitBreaker: Self.settings)
        let client = APIClient(baseURL: URL(string: "https://api.test")!, configuration: configuration)
        for index in 0..<20 {
            await #expect(throws: APIError.self) { try await client.send(APIRequest<Void>.get("/\(index)")) }
        }
        #expect(transport.requests.count == 20)
        #expect(client.metrics.circuitStateChanges == 0)
    }
}

@Suite("An origin's breaker is kept only while it has failures in its window")
struct CircuitBreakerForgettingTests {
    @Test func aBreakerWithNoFailureLeftIsForgottenAndSuccessesCostNothingAgain() async throws {
        let clock = ManualClock()
        let transport = StubTransport { _, index in index == 0 ? .text(503) : .text(200, "ok") }
        var configuration = APIClient.Configuration(transport: transport, cache: nil, retryPolicy: .never, clock: clock)
        configuration.resilience.retryBudget = nil
        let client = APIClient(baseURL: URL(string: "https://api.test")!, configuration: configuration)
        await #expect(throws: APIError.self) { try await client.send(APIRequest<Void>.get("/fails")) }
        #expect(client.resilience.trackedOrigins == 1)
        try await client.send(APIRequest<Void>.get("/ok"))
        #expect(client.resilience.trackedOrigins == 1)  // the failure is still in the window
        clock.advance(by: .seconds(10))
        try await client.send(APIRequest<Void>.get("/ok"))
        #expect(client.resilience.trackedOrigins == 0)
    }
}

@Suite("While an origin's breaker is open, a stored response that allows stale-if-error answers")
struct CircuitBreakerStaleIfErrorTests {
    @Test func aStaleResponseAnswersInsteadOfTheOpenCircuitError() async throws {
        let date = TestDate()
        let transport = StubTransport { request, _ in
            request.url.path == "/report"
                ? .text(
                    200, "stored",
                    headers: ["Cache-Control": "max-age=1, stale-if-error=3600", "Date": TestDate.http(0)])
                : .text(503)
        }
        var configuration = APIClient.Configuration(
            transport: transport, retryPolicy: .never, clock: ManualClock(), currentDate: { date.now })
        configuration.cache = ResponseCache()
        configuration.resilience = Resilience(
            retryBudget: nil, circuitBreaker: .init(minimumThroughput: 2, breakDuration: .seconds(60)))
        let client = APIClient(baseURL: URL(string: "https://api.test")!, configuration: configuration)
        _ = try await client.send(APIRequest<Data>.get("/report"))
        for index in 0..<2 {
            await #expect(throws: APIError.self) { try await client.send(APIRequest<Void>.get("/down/\(index)")) }
        }
        date.advance(by: 5)  // the stored response is stale now
        let stale = try await client.send(APIRequest<Data>.get("/report"))
        #expect(String(decoding: stale.value, as: UTF8.self) == "stored")
        #expect(transport.requests.count == 3)  // the stale answer sent nothing
        #expect(client.metrics.circuitRejections == 1)
    }
}

@Suite("Callers that share one flight count once for a half-open breaker")
struct CircuitBreakerCoalescedProbeTests {
    @Test func aHundredJoinersOfOneKeySendOneProbe() async throws {
        let clock = ManualClock()
        let healthy = Atomic(false)
        let release = AsyncStream<Void>.makeStream()
        let transport = StubTransport { _, _ in
            guard healthy.load(ordering: .relaxed) else { return .text(503) }
            for await _ in release.stream { break }
            return .text(200, "ok")
        }
        var configuration = APIClient.Configuration(transport: transport, cache: nil, retryPolicy: .never, clock: clock)
        configuration.resilience = Resilience(
            retryBudget: nil, circuitBreaker: .init(minimumThroughput: 2, breakDuration: .seconds(5)))
        let client = APIClient(baseURL: URL(string: "https://api.test")!, configuration: configuration)
        for index in 0..<2 {
            await #expect(throws: APIError.self) { try await client.send(APIRequest<Void>.get("/down/\(index)")) }
        }
        healthy.store(true, ordering: .relaxed)
        clock.advance(by: .seconds(5))
        let before = client.metrics.requests
        let calls = (0..<100).map { _ in Task { try await client.send(APIRequest<Data>.get("/shared")) } }
        // Every caller waits on the probe's flight before it answers.
        try await CoalescerTestKit.waitForWaiters(100, on: client.coalescer)
        #expect(client.metrics.requests == before + 100)
        release.continuation.yield()
        for call in calls { _ = try await call.value }
        #expect(transport.requests.count == 3)  // two failures, one probe for the hundred
        #expect(client.metrics.joined == 99)
        #expect(client.metrics.circuitRejections == 0)
        #expect(client.metrics.circuitStateChanges == 3)  // open, half-open, closed
    }
}
