import Testing

@testable import Courier

/// `Stopwatch` over `ContinuousClock` reads the system clock directly on Linux; it must still measure what
/// `ContinuousClock` measures, in the same unit.
@Suite struct StopwatchTests {
    @Test func aStopwatchOnTheContinuousClockAgreesWithIt() {
        let beforeStart = ContinuousClock.now
        let stopwatch = Stopwatch(clock: ContinuousClock())
        let afterStart = ContinuousClock.now
        var previous = Duration.zero
        for _ in 0..<10_000 {
            // The stopwatch started between `beforeStart` and `afterStart`, so its reading lies between the time
            // elapsed since each, read on either side of it.
            let lower = afterStart.duration(to: .now)
            let elapsed = stopwatch.elapsed
            let upper = beforeStart.duration(to: .now)
            #expect(elapsed >= lower && elapsed <= upper, "\(lower) ≤ \(elapsed) ≤ \(upper)")
            #expect(elapsed >= previous, "the stopwatch went back from \(previous) to \(elapsed)")
            previous = elapsed
        }
    }

    @Test func aStopwatchOnAnInjectedClockReadsThatClock() {
        let clock = TestClock()
        let stopwatch = Stopwatch(clock: clock)
        #expect(stopwatch.elapsed == .zero)
        clock.advance(by: .seconds(90))
        #expect(stopwatch.elapsed == .seconds(90))
    }
}
