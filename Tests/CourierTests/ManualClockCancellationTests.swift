import CourierTesting
import Foundation
import Testing

/// ``ManualClock/waitForSleeper(_:)`` returns when its task is cancelled (a test's time limit, a task group that is
/// done), and forgets the waiter: a sleeper that comes later does not resume it a second time.
@Suite(.timeLimit(.minutes(1))) struct ManualClockCancellationTests {
    @Test func aCancelledWaitForASleeperReturns() async throws {
        let clock = ManualClock()
        let waiting = Task { await clock.waitForSleeper(of: .seconds(42)) }
        waiting.cancel()
        await waiting.value
        // The waiter is gone: a sleeper it would have matched does not resume it again (that would trap).
        let sleeper = Task { try await clock.sleep(for: .seconds(42)) }
        await clock.waitForSleeper(of: .seconds(42))
        clock.advance(by: .seconds(42))
        try await sleeper.value
    }

    @Test func aWaitCancelledBeforeItStartsReturnsAtOnce() async throws {
        let clock = ManualClock()
        let waiting = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await clock.waitForSleeper { _ in false }
            return Task.isCancelled
        }
        #expect(await waiting.value)
    }

    @Test func manyCancelledWaitsLeaveNoWaiterBehind() async throws {
        let clock = ManualClock()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<500 {
                group.addTask { await clock.waitForSleeper(of: .seconds(1)) }
            }
            group.cancelAll()
        }
        let sleeper = Task { try await clock.sleep(for: .seconds(1)) }
        await clock.waitForSleeper(of: .seconds(1))
        clock.advance(by: .seconds(1))
        try await sleeper.value
    }
}
