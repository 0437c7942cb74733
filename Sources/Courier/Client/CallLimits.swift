/// The deadlines of one call, on the client's ``DeadlineScheduler`` clock: each attempt's `timeout`, and the end of
/// the whole call when the request or the client sets a `callTimeout`.
///
/// Every wait of the call is bounded by ``nextWait(now:)``: a token refresh, a shared flight it joined, each
/// attempt. A retry whose delay would end past the call's end is not made (``allowing(_:now:)``).
struct CallLimits: Sendable {
    /// The longest one attempt, or one wait before an attempt, may take.
    let timeout: Duration
    /// When the whole call must be over, as time elapsed on the scheduler's clock; `nil` when it has no such bound.
    let end: Duration?
    /// The bound of the whole call that `end` was set from, for the error when it passes.
    let callTimeout: Duration?

    /// `now` is read only when there is a `callTimeout`: most calls have none, and each reading of the clock costs.
    init(timeout: Duration, callTimeout: Duration?, now: @autoclosure () -> Duration) {
        self.timeout = timeout
        self.callTimeout = callTimeout
        end = callTimeout.map { now().saturatingAdding($0) }
    }

    /// What is left of the whole call, never negative; `nil` without a call deadline.
    func remaining(now: @autoclosure () -> Duration) -> Duration? {
        end.map { max(.zero, $0 - now()) }
    }

    /// The bound of the next wait: the attempt timeout, cut to what is left of the call.
    func nextWait(now: @autoclosure () -> Duration) -> Duration {
        remaining(now: now()).map { min(timeout, $0) } ?? timeout
    }

    /// `decision`, unless it retries after a delay that would outlast the call: then no retry.
    func allowing(_ decision: RetryDecision, now: @autoclosure () -> Duration) -> RetryDecision {
        guard case .retry(let delay) = decision, let left = remaining(now: now()), delay >= left else {
            return decision
        }
        return .doNotRetry
    }
}
