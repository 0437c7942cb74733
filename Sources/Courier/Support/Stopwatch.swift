#if canImport(Glibc)
    import Glibc
#endif

/// Time elapsed since it was made, read on an injected clock.
///
/// `any Clock<Duration>` hides its instant type, so elapsed time on an injected clock is measured by opening the clock
/// once and keeping its start instant in a closure. The default clock is read without one.
struct Stopwatch: Sendable {
    /// How an injected clock is read; `nil` for the default clock (`ContinuousClock`), read directly from `start`.
    private let read: (@Sendable () -> Duration)?
    #if canImport(Glibc)
        /// When the stopwatch was made, in nanoseconds on `CLOCK_BOOTTIME`, for the default clock.
        private let start: Int64
    #else
        /// When the stopwatch was made, for the default clock.
        private let start: ContinuousClock.Instant
    #endif

    init(clock: any Clock<Duration>) {
        // The default clock is read directly, without a closure: through the generic closure every read went through
        // the clock's and its instant's witness tables, about 270 instructions, and a network call reads the time
        // four times. A closure of its own still cost each read a retain and a release of the closure's context,
        // which every call of one client shares (and whose count the cores then pass back and forth), and a call.
        #if canImport(Glibc)
            start = Self.bootTime()
        #else
            start = ContinuousClock.now
        #endif
        read = clock is ContinuousClock ? nil : Self.start(clock)
    }

    /// The time since the stopwatch was made.
    var elapsed: Duration {
        // Tested in place: a binding of the closure retains its context.
        guard read == nil else { return read.unsafelyUnwrapped() }
        #if canImport(Glibc)
            // On Linux `ContinuousClock` is `CLOCK_BOOTTIME`; read directly, it costs about half of
            // `ContinuousClock.now` and `duration(to:)`, whose 128-bit arithmetic is most of the rest.
            return .nanoseconds(Self.bootTime() &- start)
        #else
            return start.duration(to: ContinuousClock.now)
        #endif
    }

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
