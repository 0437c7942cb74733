import Foundation
import Testing

@testable import Courier

/// The bounds of a flight's callers are kept with the flight, behind one scheduler entry for the earliest: each caller
/// still leaves at its own bound, in the order of the bounds (not of arrival), and nothing stays scheduled once the
/// flight has answered.
@Suite(.timeLimit(.minutes(1))) struct CoalescerWaitBoundTests {
    private struct TimedOut: Error, Equatable {
        let after: Duration
    }

    /// A flight held open by a gate, led by a caller without a bound of its own, with the clock its callers' bounds
    /// run on.
    private struct HeldFlight {
        let clock = TestClock()
        let scheduler: DeadlineScheduler
        let coalescer = RequestCoalescer<String, Int>()
        let gate = CoalescerTestKit.Gate()
        let leader: Task<Coalesced<Int>, any Error>

        init(answering answer: Int) async {
            let scheduler = DeadlineScheduler(clock: clock)
            let (coalescer, gate) = (coalescer, gate)
            self.scheduler = scheduler
            leader = Task {
                try await coalescer.run("k", bound: Self.bound(scheduler, joining: nil)) {
                    _ = await gate.wait()
                    return answer
                }
            }
            while await coalescer.waiterCount < 1 { await Task.yield() }
        }

        /// A caller that joins the flight with a bound of `limit`, once it waits on the flight.
        func join(within limit: Duration) async -> Task<Coalesced<Int>, any Error> {
            let waiting = await coalescer.waiterCount
            let (coalescer, scheduler) = (coalescer, scheduler)
            let joiner = Task { try await coalescer.run("k", bound: Self.bound(scheduler, joining: limit)) { 0 } }
            while await coalescer.waiterCount < waiting + 1 { await Task.yield() }
            return joiner
        }

        private static func bound(_ scheduler: DeadlineScheduler, joining: Duration?)
            -> RequestCoalescer<String, Int>.WaitBound
        {
            .init(scheduler: scheduler, leading: nil, joining: joining, error: { TimedOut(after: $0) })
        }
    }

    /// Fails on the old code, which gave each joiner a scheduler entry (and an allocated closure) of its own: the
    /// scheduler then held 4 entries, not 1.
    @Test func joinersLeaveAtTheirOwnBoundsWithOneTimerForTheFlight() async throws {
        let flight = await HeldFlight(answering: 42)
        // Joined in this order; they must leave in the order of their bounds.
        var joiners: [Duration: Task<Coalesced<Int>, any Error>] = [:]
        for seconds in [5, 2, 8, 3] {
            joiners[.seconds(seconds)] = await flight.join(within: .seconds(seconds))
        }
        #expect(flight.scheduler.pendingCount == 1, "one timer for the flight, set for its earliest bound")

        // The 3 s joiner is cancelled first: its bound stays in the flight's heap but never resumes anyone.
        joiners[.seconds(3)]?.cancel()
        await #expect(throws: CancellationError.self) { try await joiners[.seconds(3)]?.value }

        await flight.clock.waitForSleeper(of: .seconds(2))
        flight.clock.advance(by: .seconds(2))
        #expect(try await error(of: joiners[.seconds(2)]) == TimedOut(after: .seconds(2)))
        // The timer moves on to the next bound, passing the cancelled joiner's 3 s.
        await flight.clock.waitForSleeper(of: .seconds(3))
        flight.clock.advance(by: .seconds(3))
        #expect(try await error(of: joiners[.seconds(5)]) == TimedOut(after: .seconds(5)))
        #expect(await flight.coalescer.waiterCount == 2, "the leader and the 8 s joiner still wait")

        await flight.gate.open()
        #expect(try await flight.leader.value.value == 42)
        let late = try #require(try await joiners[.seconds(8)]?.value)
        #expect(late.value == 42 && late.joined)
        #expect(flight.scheduler.pendingCount == 0, "the flight's timer goes with the flight")
    }

    /// A bound that arrives later but ends sooner moves the flight's timer earlier; the one it replaces is cancelled.
    @Test func anEarlierBoundMovesTheFlightsTimer() async throws {
        let flight = await HeldFlight(answering: 7)
        let slow = await flight.join(within: .seconds(60))
        let quick = await flight.join(within: .seconds(1))
        #expect(flight.scheduler.pendingCount == 1)

        await flight.clock.waitForSleeper(of: .seconds(1))
        flight.clock.advance(by: .seconds(1))
        #expect(try await error(of: quick) == TimedOut(after: .seconds(1)))
        await flight.gate.open()
        #expect(try await slow.value.value == 7)
        #expect(try await flight.leader.value.value == 7)
        #expect(flight.scheduler.pendingCount == 0)
    }

    private func error(of task: Task<Coalesced<Int>, any Error>?) async throws -> TimedOut? {
        do {
            _ = try await task?.value
            return nil
        } catch let error as TimedOut {
            return error
        }
    }
}
