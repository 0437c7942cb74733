import Foundation
import Testing

@testable import Courier

/// An idle timeout applies only to the wait it was set for: a chunk handed to the reader before the timeout's action
/// takes effect wins, and the stream goes on.
///
/// The scheduler takes a due entry off its heap under its lock and calls it after, so a chunk can reach the reader
/// between the two. The test makes that happen instead of waiting for it: it takes the idle deadline's entry off the
/// heap as the timer would (`takeDue(at:)`), lets the chunk through, and only then runs the entry. An earlier version
/// forced the order by holding the timer task in an entry that fired first, which blocked a thread of the
/// cooperative pool while the chunk needed another: on a busy two-core run the chunk waited 6–8 s for one, and past
/// the test's 10 s bound CI failed.
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

        // The idle deadline has passed and is off the heap, its action not yet run; the chunk comes now.
        let expiries = scheduler.takeDue(at: Self.timeout)
        #expect(expiries.count == 1, "the idle deadline was the one entry due")
        #expect(scheduler.pendingCount == 0)
        feed.send("late")
        switch await first.result {
        case .success(let chunk): #expect(chunk == Data("late".utf8))
        case .failure(let error): Issue.record("the first read failed: \(error)")
        }
        // The reader asks again before the expiry runs: the expiry belongs to the wait that is over, not to this one.
        let second = Task { try await stream.nextChunk() }
        while scheduler.pendingCount == 0 {
            try Task.checkCancellation()
            await Task.yield()
        }
        for expire in expiries { expire() }

        feed.send("next")
        switch await second.result {
        case .success(let chunk): #expect(chunk == Data("next".utf8))
        case .failure(let error):
            Issue.record("the stream ended with \(error), though the chunk reached the reader before the expiry")
        }
        feed.finish()
        #expect(try await stream.nextChunk() == nil)
        // The timer still sleeps towards the deadline taken by hand: let it wake, find nothing and end.
        await clock.waitForSleeper { $0 == Self.timeout }
        clock.advance(by: Self.timeout)
    }
}
