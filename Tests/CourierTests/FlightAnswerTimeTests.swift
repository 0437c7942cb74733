import Foundation
import Synchronization
import Testing

@testable import Courier

/// A flight that others joined reads the time it answered once, for all of them: each joiner's
/// ``CallTimings/sharedFlightWait`` runs from its own start to that time, and its answer costs it no read of the clock.
@Suite(.timeLimit(.minutes(1))) struct FlightAnswerTimeTests {
    /// `ContinuousClock`, counting how often it is read.
    private struct CountingClock: Clock {
        typealias Instant = ContinuousClock.Instant
        let reads = Reads()

        final class Reads: Sendable {
            let count = Atomic(0)
        }

        var now: Instant {
            reads.count.add(1, ordering: .relaxed)
            return ContinuousClock.now
        }

        var minimumResolution: Duration { ContinuousClock().minimumResolution }

        func sleep(until deadline: Instant, tolerance: Duration?) async throws {
            try await ContinuousClock().sleep(until: deadline, tolerance: tolerance)
        }
    }

    /// Fails on the code before the flight kept its time: every joiner read the clock twice once resumed (when the
    /// flight answered, and when its call finished), 2 × 101 reads after the flight was let through.
    @Test func joinersReadTheClockOnceAfterTheFlightAnswers() async throws {
        let clock = CountingClock()
        let gate = CoalescerTestKit.Gate()
        let transport = MockTransport { _, _ in
            _ = await gate.wait()
            return .text(200, "answer")
        }
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(transport: transport, cache: nil, retryPolicy: .never, clock: clock))
        let callers = 101
        let calls = (0..<callers).map { _ in Task { try await client.send(APIRequest<Data>.get("/item")) } }
        try await CoalescerTestKit.waitForWaiters(callers, on: client.coalescer)

        let readsBefore = clock.reads.count.load(ordering: .relaxed)
        await gate.open()
        var waits: [Duration] = []
        for call in calls {
            let response = try await call.value
            if let wait = response.timings.sharedFlightWait { waits.append(wait) }
        }
        let reads = clock.reads.count.load(ordering: .relaxed) - readsBefore

        #expect(transport.callCount == 1)
        #expect(waits.count == callers - 1, "every caller but the leader shared the flight")
        #expect(waits.allSatisfy { $0 > .zero })
        // One read per call as it finishes, and a few for the flight itself (its attempt's end, its answer).
        #expect(reads <= callers + 10, "\(reads) reads of the clock for \(callers) callers")
    }
}
