/// Time elapsed since it was made, read on an injected clock.
///
/// `any Clock<Duration>` hides its instant type, so elapsed time is measured by opening the clock once and
/// keeping its start instant in a closure.
struct Stopwatch: Sendable {
    private let read: @Sendable () -> Duration

    init(clock: any Clock<Duration>) {
        read = Self.start(clock)
    }

    /// The time since the stopwatch was made.
    var elapsed: Duration { read() }

    private static func start<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }
}
