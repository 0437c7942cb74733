/// Time elapsed since it was made, read on an injected clock.
///
/// `any Clock<Duration>` hides its instant type, so elapsed time is measured by opening the clock once and
/// keeping its start instant in a closure.
struct Stopwatch: Sendable {
    private let read: @Sendable () -> Duration

    init(clock: any Clock<Duration>) {
        // The default clock is read directly: through the generic closure every read went through the clock's and
        // its instant's witness tables, about 270 instructions, and a network call reads the time four times.
        if clock is ContinuousClock {
            let start = ContinuousClock.now
            read = { start.duration(to: ContinuousClock.now) }
        } else {
            read = Self.start(clock)
        }
    }

    /// The time since the stopwatch was made.
    var elapsed: Duration { read() }

    private static func start<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }
}
