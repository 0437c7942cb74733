import Foundation
import Testing

@testable import Courier

/// An idle timeout applies only to the wait it was set for: a chunk handed to the reader before the timeout's action
/// takes effect wins, and the stream goes on. The interleaving is forced on the scheduler: an entry due just before
/// the idle deadline fires first in the same batch and holds the timer until the reader has the chunk, so the idle
/// deadline's callback, already taken off the heap, runs after the chunk was delivered.
@Suite(.timeLimit(.minutes(1))) struct IdleTimeoutRaceTests {
    private static let timeout = Duration.seconds(10)

    @Test func aChunkDeliveredAfterTheTimeoutFiredButBeforeItWasAppliedWins() async throws {
        let clock = TestClock()
        let scheduler = DeadlineScheduler(clock: clock)
        let feed = ChunkFeed()
        let stream = ByteStream(next: feed.next).idleTimeout(Self.timeout, scheduler: scheduler)
        let first = Task { try await stream.nextChunk() }
        while scheduler.pendingCount == 0 {
            try Task.checkCancellation()
            await Task.yield()
        }
        let delivered = DispatchSemaphore(value: 0)
        let held = Locked(false)
        // Fires first in the batch the idle deadline fires in, and keeps the timer task until the reader got the chunk.
        _ = scheduler.schedule(at: Self.timeout - .nanoseconds(1)) {
            feed.send("late")
            let got = delivered.wait(timeout: .now() + 10) == .success
            held.withLock { $0 = got }
        }
        // Not due in that batch: the timer sleeps towards it once it has fired the idle deadline.
        let after = scheduler.schedule(at: Self.timeout + .nanoseconds(1)) {}
        await clock.waitForSleeper { $0 == Self.timeout - .nanoseconds(1) }
        clock.advance(by: Self.timeout)
        switch await first.result {
        case .success(let chunk): #expect(chunk == Data("late".utf8))
        case .failure(let error): Issue.record("the first read failed: \(error)")
        }
        delivered.signal()
        await clock.waitForSleeper { $0 == .nanoseconds(1) }
        #expect(held.withLock { $0 }, "the chunk reached the reader while the timer task was held")
        scheduler.cancel(after)

        feed.send("next")
        let next: Result<Data?, any Error>
        do { next = .success(try await stream.nextChunk()) } catch { next = .failure(error) }
        switch next {
        case .success(let chunk): #expect(chunk == Data("next".utf8))
        case .failure(let error):
            Issue.record("the stream ended with \(error), though the chunk reached the reader before the expiry")
        }
        feed.finish()
        #expect(try await stream.nextChunk() == nil)
    }
}
