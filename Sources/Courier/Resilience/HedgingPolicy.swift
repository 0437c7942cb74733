/// When an idempotent call sends a second copy of an attempt that is slow to answer ("The Tail at Scale", Dean and
/// Barroso): the first acceptable answer wins and the other copies are cancelled.
///
/// A few slow responses (a GC pause, a cold cache, a bad host behind the load balancer) make the tail of a service's
/// latency; a copy sent once an attempt is slower than almost all others usually lands on a healthy path. Sent
/// after the 95th percentile, hedges add about 5 % more calls and cut the 99.9th percentile by an order of magnitude
/// in Google's measurements. gRPC's hedging policy has the same parts: a delay, at most N copies (5 at most there).
///
/// Off by default: a hedge is a second request, and only the caller knows whether the upstream can take it. Only
/// idempotent methods (`GET`, `HEAD`, `PUT`, `DELETE`, `OPTIONS`, `TRACE`) and requests carrying an `Idempotency-Key`
/// are hedged; every copy after the first draws from the ``RetryBudget``, and an origin that has failed within its
/// circuit breaker's window is not hedged at all (a copy would add load to a failing origin, as under overload), so
/// hedging never multiplies load under an outage. A shared flight hedges once for all its callers.
///
/// ```swift
/// configuration.resilience.hedging = HedgingPolicy(delay: .percentile(0.95))
/// ```
public struct HedgingPolicy: Sendable, Hashable {
    /// How long an attempt may take before a copy is sent.
    public enum Delay: Sendable, Hashable {
        /// Always this long.
        case fixed(Duration)
        /// The given percentile (0.95 for the 95th) of the recent latencies of the origin, between `minimum` and
        /// `maximum`; `maximum` until enough latencies were seen (``HedgingPolicy/minimumSamples``).
        case percentile(Double, minimum: Duration = .milliseconds(1), maximum: Duration = .seconds(1))
    }

    /// How long an attempt may take before a copy is sent.
    public var delay: Delay
    /// The most copies of one attempt in flight, the first included (2 by default; at least 1, at most 5).
    public var maxCopies: Int
    /// How many recent latencies per origin an adaptive delay is computed from. 200.
    public static let sampleCount = 200
    /// How many latencies an origin needs before its percentile is used. 20.
    public static let minimumSamples = 20

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - delay: How long an attempt may take before a copy is sent.
    ///   - maxCopies: The most copies in flight, the first included; clamped to 1…5.
    public init(delay: Delay, maxCopies: Int = 2) {
        self.delay = delay
        self.maxCopies = min(5, max(1, maxCopies))
    }
}
