/// The state machine of a ``CircuitBreaker``: a plain value whose methods return what changed, so that its owner
/// emits events after the critical section.
struct CircuitBreakerState: Sendable {
    enum State: Sendable {
        case closed(CircuitWindow)
        case open(until: Duration)
        case halfOpen(probing: Int, succeeded: Int)
    }

    let configuration: CircuitBreaker.Configuration
    private(set) var state: State

    init(_ configuration: CircuitBreaker.Configuration) {
        self.configuration = configuration
        state = .closed(CircuitWindow(configuration))
    }

    var phase: CircuitBreaker.Phase {
        switch state {
        case .closed: .closed
        case .open: .open
        case .halfOpen: .halfOpen
        }
    }

    /// Whether a call may go now: open turns half-open once its break is over, and half-open lets at most
    /// ``CircuitBreaker/Configuration/probes`` calls through at a time.
    mutating func admit(now: Duration) -> (CircuitBreaker.Admission, CircuitBreaker.Phase?) {
        switch state {
        case .closed:
            return (.allowed, nil)
        case .open(let until) where now < until:
            return (.rejected(retryAfter: until - now), nil)
        case .open:
            state = .halfOpen(probing: 1, succeeded: 0)
            return (.probe, .halfOpen)
        case .halfOpen(let probing, let succeeded) where probing + succeeded < configuration.probes:
            state = .halfOpen(probing: probing + 1, succeeded: succeeded)
            return (.probe, nil)
        case .halfOpen:
            // The probes in flight decide; until one ends, a caller may try again at once.
            return (.rejected(retryAfter: .zero), nil)
        }
    }

    /// Records how a call ended; returns the new phase when it changed. A probe's outcome decides a half-open
    /// breaker; an outcome of a call admitted before the breaker opened does not count once it has.
    mutating func record(_ outcome: CircuitBreaker.Outcome, probe: Bool, now: Duration) -> CircuitBreaker.Phase? {
        switch state {
        case .closed(var window):
            window.record(outcome, now: now)
            if window.isTripped(now: now) {
                state = .open(until: now.saturatingAdding(configuration.breakDuration))
                return .open
            }
            state = .closed(window)
            return nil
        case .halfOpen(let probing, let succeeded) where probe:
            if outcome == .failure {
                state = .open(until: now.saturatingAdding(configuration.breakDuration))
                return .open
            }
            if succeeded + 1 >= configuration.probes {
                state = .closed(CircuitWindow(configuration))
                return .closed
            }
            state = .halfOpen(probing: probing - 1, succeeded: succeeded + 1)
            return nil
        case .open, .halfOpen:
            return nil
        }
    }

    /// A probe ended without an outcome (its caller cancelled): its place goes to the next caller.
    mutating func abandonProbe() {
        if case .halfOpen(let probing, let succeeded) = state {
            state = .halfOpen(probing: max(0, probing - 1), succeeded: succeeded)
        }
    }

    /// Closed with no failure in its window: nothing worth remembering.
    func isIdle(now: Duration) -> Bool {
        if case .closed(let window) = state { return window.total(now: now).failures == 0 }
        return false
    }
}

/// Successes and failures of the sampling duration (``SlidingCounts``: successes first, failures second).
struct CircuitWindow: Sendable {
    private let failureRatio: Double
    private let minimumThroughput: Int
    private var counts: SlidingCounts

    init(_ configuration: CircuitBreaker.Configuration) {
        counts = SlidingCounts(window: configuration.samplingDuration)
        failureRatio = configuration.failureRatio
        minimumThroughput = configuration.minimumThroughput
    }

    mutating func record(_ outcome: CircuitBreaker.Outcome, now: Duration) {
        let slot = counts.slotIndex(now)
        switch outcome {
        case .success: counts.add(first: 1, inSlot: slot)
        case .failure: counts.add(second: 1, inSlot: slot)
        }
    }

    func total(now: Duration) -> (calls: Int, failures: Int) {
        let (successes, failures) = counts.totals(now: now)
        return (successes + failures, failures)
    }

    /// At least the minimum throughput, and a failure ratio at or above the threshold.
    func isTripped(now: Duration) -> Bool {
        let (calls, failures) = total(now: now)
        return calls >= minimumThroughput && calls > 0 && Double(failures) >= failureRatio * Double(calls)
    }
}
