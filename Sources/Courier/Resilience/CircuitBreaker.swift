/// Fails calls to an origin fast while most of them fail, and lets a few probes find out when it has recovered.
///
/// Closed, calls go through and their outcomes are counted over a sliding ``Configuration/samplingDuration``. Once at
/// least ``Configuration/minimumThroughput`` calls were counted and at least ``Configuration/failureRatio`` of them
/// failed, the breaker opens: for ``Configuration/breakDuration`` every call fails at once with
/// ``APIError/circuitOpen(origin:retryAfter:)``, which says when to try again, and the origin gets time to recover
/// instead of a queue of retries. Then it is half-open: up to ``Configuration/probes`` calls go through (callers
/// sharing one flight count once). A probe that succeeds closes the breaker; one that fails opens it again.
///
/// What counts as a failure: a `5xx` status and a transport failure (refused, reset, timed out). A `4xx` is the
/// server working and saying no, so it counts as a success; a cancelled call does not count.
///
/// The defaults take the thresholds of resilience4j (a **50 %** failure ratio) with the window, the minimum and the
/// break of a service client that calls an origin tens of times a second: **10 seconds**, **20 calls**, a **5 second**
/// break (Polly's), **1 probe**. Polly's standard handler trips at 10 % over 30 s with 100 calls; with a retry budget
/// in front, that low a ratio turns a brownout (a fraction of calls failing, most of them fixed by a retry) into an
/// outage of its own, so Courier trips only when most calls fail.
///
/// - Important: The state is an explicit state machine behind a lock; ``admit()`` and ``record(_:probe:)`` are
///   short critical sections and never wait. A caller that was admitted as a probe must end it with
///   ``record(_:probe:)`` or ``abandonProbe()``, or the half-open breaker keeps its place.
public final class CircuitBreaker: Sendable {
    /// When the breaker opens and how it recovers.
    public struct Configuration: Sendable, Hashable {
        /// The share of failed calls in the window at which the breaker opens, from 0 to 1. 0.5 by default.
        public var failureRatio: Double
        /// How far back outcomes count. 10 seconds by default.
        public var samplingDuration: Duration
        /// The fewest calls in the window before the ratio counts. 20 by default.
        public var minimumThroughput: Int
        /// How long an open breaker fails calls before it lets probes through. 5 seconds by default.
        public var breakDuration: Duration
        /// How many calls a half-open breaker lets through, and how many must succeed to close it. 1 by default.
        public var probes: Int

        /// Creates a configuration; see ``CircuitBreaker`` for the defaults and why.
        ///
        /// - Parameters:
        ///   - failureRatio: The share of failed calls that opens the breaker, clamped to 0…1.
        ///   - samplingDuration: How far back outcomes count; at least 1 ms.
        ///   - minimumThroughput: The fewest calls before the ratio counts; at least 1.
        ///   - breakDuration: How long the breaker stays open; never negative.
        ///   - probes: How many calls a half-open breaker lets through; at least 1.
        public init(
            failureRatio: Double = 0.5, samplingDuration: Duration = .seconds(10), minimumThroughput: Int = 20,
            breakDuration: Duration = .seconds(5), probes: Int = 1
        ) {
            self.failureRatio = failureRatio.isFinite ? min(1, max(0, failureRatio)) : 1
            self.samplingDuration = max(samplingDuration, .milliseconds(1))
            self.minimumThroughput = max(1, minimumThroughput)
            self.breakDuration = breakDuration.saturatedDelay
            self.probes = max(1, probes)
        }

        /// The defaults described on ``CircuitBreaker``.
        public static var `default`: Configuration { Configuration() }
    }

    /// Where the breaker is.
    public enum Phase: String, Sendable, Hashable, CustomStringConvertible {
        /// Calls go through and are counted.
        case closed
        /// Calls fail fast until the break is over.
        case open
        /// A bounded number of probes go through; their outcome closes or opens the breaker.
        case halfOpen = "half-open"

        /// `closed`, `open` or `half-open`.
        public var description: String { rawValue }
    }

    /// Whether a call may go.
    public enum Admission: Sendable, Hashable {
        /// Closed: go, and record the outcome.
        case allowed
        /// Half-open: go as a probe, and record the outcome with `probe: true` (or abandon the probe).
        case probe
        /// Open: do not send; try again after this long (zero while probes are deciding).
        case rejected(retryAfter: Duration)
    }

    /// How a call ended, as the breaker counts it.
    public enum Outcome: Sendable, Hashable {
        /// An answer that is not a `5xx` (a `4xx` included).
        case success
        /// A `5xx` answer or a transport failure.
        case failure
    }

    /// The breaker's configuration.
    public let configuration: Configuration
    private let stopwatch: Stopwatch
    private let state: Locked<CircuitBreakerState>

    /// Creates a closed breaker.
    ///
    /// - Parameters:
    ///   - configuration: When it opens and how it recovers. ``Configuration/default`` by default.
    ///   - clock: The clock its window and break are measured on; tests pass a manual clock.
    public init(_ configuration: Configuration = .default, clock: any Clock<Duration> = ContinuousClock()) {
        self.configuration = configuration
        self.stopwatch = Stopwatch(clock: clock)
        self.state = Locked(CircuitBreakerState(configuration))
    }

    /// Where the breaker is now (an open breaker whose break is over still says `open` until a call is admitted).
    public var phase: Phase { state.withLock { $0.phase } }

    /// Asks whether a call may go now.
    public func admit() -> Admission {
        admitNoting().admission
    }

    /// Records how an admitted call ended.
    ///
    /// - Parameters:
    ///   - outcome: How it ended.
    ///   - probe: Whether ``admit()`` admitted it as a probe.
    public func record(_ outcome: Outcome, probe: Bool = false) {
        _ = recordNoting(outcome, probe: probe)
    }

    /// Gives back the place of a probe that ended without an outcome (cancelled), so another call can probe.
    public func abandonProbe() {
        state.withLock { $0.abandonProbe() }
    }

    /// ``admit()``, and the phase it moved to, if it moved.
    func admitNoting() -> (admission: Admission, change: Phase?) {
        let now = stopwatch.elapsed
        return state.withLock { $0.admit(now: now) }
    }

    /// ``record(_:probe:)``, and the phase it moved to, if it moved.
    func recordNoting(_ outcome: Outcome, probe: Bool) -> Phase? {
        let now = stopwatch.elapsed
        return state.withLock { $0.record(outcome, probe: probe, now: now) }
    }

    /// Closed with no failure in its window.
    var isIdle: Bool {
        let now = stopwatch.elapsed
        return state.withLock { $0.isIdle(now: now) }
    }
}
