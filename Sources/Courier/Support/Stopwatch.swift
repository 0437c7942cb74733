#if canImport(Glibc)
    import Glibc
#endif

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
            #if canImport(Glibc)
                // On Linux `ContinuousClock` is `CLOCK_BOOTTIME`; read directly, it costs about half of
                // `ContinuousClock.now` and `duration(to:)`, whose 128-bit arithmetic is most of the rest. A call reads
                // the time four or five times.
                let start = Self.bootTime()
                read = { .nanoseconds(Self.bootTime() &- start) }
            #else
                let start = ContinuousClock.now
                read = { start.duration(to: ContinuousClock.now) }
            #endif
        } else {
            read = Self.start(clock)
        }
    }

    /// The time since the stopwatch was made.
    var elapsed: Duration { read() }

    #if canImport(Glibc)
        /// Nanoseconds on `CLOCK_BOOTTIME`, the clock behind `ContinuousClock` on Linux.
        private static func bootTime() -> Int64 {
            var time = timespec()
            clock_gettime(CLOCK_BOOTTIME, &time)
            return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
        }
    #endif

    private static func start<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }
}
