import Foundation
import Testing

@testable import Courier

@Suite(.timeLimit(.minutes(1))) struct DeadlineSchedulerTests {
    @Test func manyDeadlinesShareOneTimer() async throws {
        let clock = TestClock()
        let scheduler = DeadlineScheduler(clock: clock)
        let fired = Locked<[Int]>([])
        for index in 0..<100 {
            _ = scheduler.schedule(after: .seconds(60)) { fired.withLock { $0.append(index) } }
        }
        await clock.waitForSleeper(of: .seconds(60))
        #expect(clock.pendingSleeps == [.seconds(60)])
        clock.advance(by: .seconds(60))
        while fired.withLock({ $0.count }) < 100 { await Task.yield() }
        #expect(Set(fired.withLock { $0 }) == Set(0..<100))
        #expect(scheduler.pendingCount == 0)
    }

    @Test func cancelledEntriesNeverFire() async throws {
        let clock = TestClock()
        let scheduler = DeadlineScheduler(clock: clock)
        let fired = Locked<[String]>([])
        let first = scheduler.schedule(after: .seconds(1)) { fired.withLock { $0.append("first") } }
        _ = scheduler.schedule(after: .seconds(2)) { fired.withLock { $0.append("second") } }
        scheduler.cancel(first)
        await clock.waitForSleeper(of: .seconds(1))
        clock.advance(by: .seconds(1))
        await clock.waitForSleeper(of: .seconds(1))  // the timer moves on to the second deadline
        #expect(fired.withLock { $0 }.isEmpty)
        clock.advance(by: .seconds(1))
        while fired.withLock({ $0.isEmpty }) { await Task.yield() }
        #expect(fired.withLock { $0 } == ["second"])
    }

    @Test func anEarlierDeadlineReplacesTheTimer() async throws {
        let clock = TestClock()
        let scheduler = DeadlineScheduler(clock: clock)
        let fired = Locked<[String]>([])
        _ = scheduler.schedule(after: .seconds(60)) { fired.withLock { $0.append("late") } }
        await clock.waitForSleeper(of: .seconds(60))
        _ = scheduler.schedule(after: .milliseconds(250)) { fired.withLock { $0.append("early") } }
        await clock.waitForSleeper(of: .milliseconds(250))
        clock.advance(by: .milliseconds(250))
        while fired.withLock({ $0.isEmpty }) { await Task.yield() }
        #expect(fired.withLock { $0 } == ["early"])
        #expect(scheduler.pendingCount == 1)
        await clock.waitForSleeper { $0 == .seconds(60) - .milliseconds(250) }
        #expect(clock.pendingSleeps == [.seconds(60) - .milliseconds(250)])
    }

    @Test func tenThousandCancelledLongDeadlinesLeaveAHeapOfTheLiveOnes() {
        let clock = TestClock()
        let scheduler = DeadlineScheduler(clock: clock)
        let live = (0..<10).map { _ in scheduler.schedule(after: .seconds(7200)) {} }
        for _ in 0..<10_000 {
            scheduler.cancel(scheduler.schedule(after: .seconds(3600)) {})
        }
        #expect(scheduler.pendingCount == live.count)
        #expect(scheduler.heapCount <= 2 * live.count + DeadlineScheduler.compactionFloor + 1)
    }

    @Test func cancellingMostOfABurstCompactsTheHeapToTheLiveEntries() {
        let clock = TestClock()
        let scheduler = DeadlineScheduler(clock: clock)
        var random = SplitMix64(seed: 14)
        var ids = (0..<10_000).map { _ in scheduler.schedule(after: .seconds(Int64(random.int(60...3600)))) {} }
        ids.shuffle(using: &random)
        for id in ids.dropFirst(1_000) { scheduler.cancel(id) }
        #expect(scheduler.pendingCount == 1_000)
        #expect(scheduler.heapCount <= 2 * 1_000 + DeadlineScheduler.compactionFloor + 1)
    }

    @Test func aThousandSequentialCallsLeaveOneTimer() async throws {
        let clock = TestClock()
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(transport: MockTransport.responding(), cache: nil, retryPolicy: .never, clock: clock))
        for index in 0..<1_000 {
            try await client.send(APIRequest<Void>.get("/items/\(index)"))
        }
        #expect(client.deadlines.pendingCount == 0)
        #expect(clock.pendingSleeps.count <= 1)
    }
}
