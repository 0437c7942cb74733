import CourierTesting
import Foundation
import Testing

@testable import Courier

@Suite("A concurrency limit queues in arrival order and sheds what would wait too long")
struct ConcurrencyLimitTests {
    /// Waits (yielding, not sleeping) until `limit` has `count` callers in line.
    private func waitUntil(_ limit: ConcurrencyLimit, waiting count: Int) async {
        while limit.waiting != count { await Task.yield() }
    }

    @Test func waitersGetPlacesInArrivalOrderAndTheOneBeyondTheQueueIsShed() async throws {
        let limit = ConcurrencyLimit(.fixed(1, queue: 2), clock: ManualClock())
        try await limit.acquire(within: .seconds(60))
        let order = Locked<[String]>([])
        let first = Task {
            try await limit.acquire(within: .seconds(60))
            order.withLock { $0.append("first") }
        }
        await waitUntil(limit, waiting: 1)
        let second = Task {
            try await limit.acquire(within: .seconds(60))
            order.withLock { $0.append("second") }
        }
        await waitUntil(limit, waiting: 2)
        await #expect(throws: ShedReason.queueFull(capacity: 2)) { try await limit.acquire(within: .seconds(60)) }
        limit.release()
        try await first.value
        #expect(order.withLock { $0 } == ["first"])
        #expect(limit.waiting == 1)
        limit.release()
        try await second.value
        #expect(order.withLock { $0 } == ["first", "second"])
        #expect(limit.inFlight == 1)
    }

    @Test func aWaiterLeavesTheQueueWhenItsDeadlinePasses() async throws {
        let clock = ManualClock()
        let limit = ConcurrencyLimit(.fixed(1, queue: 5), clock: clock)
        try await limit.acquire(within: .seconds(60))
        let waiter = Task { try await limit.acquire(within: .seconds(2)) }
        await clock.waitForSleeper(of: .seconds(2))
        await waitUntil(limit, waiting: 1)
        clock.advance(by: .seconds(2))
        await #expect(throws: ShedReason.waitedPastDeadline(.seconds(2))) { try await waiter.value }
        #expect(limit.waiting == 0)
        #expect(limit.inFlight == 1)
        limit.release()
        #expect(limit.inFlight == 0)
    }

    @Test func aCancelledWaiterLeavesAtOnce() async throws {
        let limit = ConcurrencyLimit(.fixed(1, queue: 5), clock: ManualClock())
        try await limit.acquire(within: .seconds(60))
        let waiter = Task { try await limit.acquire(within: .seconds(60)) }
        await waitUntil(limit, waiting: 1)
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(limit.waiting == 0)
        limit.release()
        #expect(limit.inFlight == 0)
    }

    @Test func anAdaptiveLimitFallsOnDropsAndRisesWhenBusy() async throws {
        let limit = ConcurrencyLimit(
            ConcurrencyLimit.Configuration(limit: .aimd(initial: 10, minimum: 2, maximum: 11, backoff: 0.5)),
            clock: ManualClock())
        try await limit.acquire(within: .seconds(1))
        limit.release(dropped: true)
        #expect(limit.limit == 5)
        for _ in 0..<3 { try await limit.acquire(within: .seconds(1)) }
        limit.release()  // 3 of 5 in use: busy, so +1
        #expect(limit.limit == 6)
        limit.release()  // 2 of 6: not busy
        #expect(limit.limit == 6)
        limit.release(dropped: true)
        limit.release(dropped: false)
        #expect(limit.limit == 3)
    }

    @Test func aClientShedsACallThatFindsNoPlace() async throws {
        let gate = AsyncStream<Void>.makeStream()
        let transport = StubTransport { _ in
            for await _ in gate.stream { break }
            return .text(200, "ok")
        }
        var configuration = APIClient.Configuration(transport: transport, cache: nil, retryPolicy: .never)
        configuration.resilience.concurrencyLimit = .fixed(1, queue: 0)
        let client = APIClient(baseURL: URL(string: "https://api.test")!, configuration: configuration)
        let first = Task { try await client.send(APIRequest<Void>.get("/slow")) }
        while transport.requests.isEmpty { await Task.yield() }
        do {
            try await client.send(APIRequest<Void>.get("/other"))
            Issue.record("not shed")
        } catch APIError.shed(let origin, .queueFull(capacity: 0)) {
            #expect(origin == "https://api.test:443")
        }
        gate.continuation.yield()
        _ = try await first.value
        #expect(client.metrics.shedCalls == 1)
        #expect(transport.requests.count == 1)
    }
}
