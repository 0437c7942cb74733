import Synchronization

/// Bounds how many retries (and hedged copies) a client sends, as a share of the calls it makes, so that a failing
/// upstream is not sent three times its load.
///
/// A count-based retry policy multiplies load exactly when an upstream can least take it: with 3 attempts, an upstream
/// that fails everything receives 3× the calls, and clients of clients multiply that again. A budget makes retries a
/// fraction of calls instead. Every call deposits one token; a retry withdraws one and is made only while the
/// retries of the last ``Configuration/window`` stay within ``Configuration/ratio`` of its calls plus a small
/// reserve (``Configuration/minimumPerSecond`` × the window), which lets a client with few calls still retry.
///
/// The defaults are Finagle's `RetryBudget`, which has run in front of Twitter's services for a decade: retries may
/// add **20 %** to the calls of the last **10 seconds**, plus **10 retries a second**. gRPC's retry throttling has the
/// same shape as a token bucket (failures cost a token, successes refund a tenth, retries stop below half the
/// bucket); Finagle's form is kept because its bound reads in requests: under a total outage an upstream receives at
/// most 1.2 calls per call, plus the reserve, instead of 3.
///
/// ```swift
/// let budget = RetryBudget()
/// budget.deposit()                      // a call starts
/// if budget.tryWithdraw() { /* retry */ } else { /* fail with the last outcome */ }
/// ```
///
/// - Important: Depositing is one atomic increment, so every call can afford it; the arithmetic runs only when a
///   retry asks (``tryWithdraw()``). Deposits made since the last withdrawal are then spread evenly over the time
///   since, and only those that fall within the window count: after an hour of successes a burst of failures finds
///   the budget of the last ten seconds, not of the hour.
public final class RetryBudget: Sendable {
    /// How large the budget is.
    public struct Configuration: Sendable, Hashable {
        /// How long a deposit counts. 10 seconds by default.
        public var window: Duration
        /// The share of calls that may be retried, from 0 to 1. 0.2 (20 %) by default.
        public var ratio: Double
        /// Retries allowed each second whatever the ratio, so that a client with few calls can still retry. 10 by
        /// default.
        public var minimumPerSecond: Int

        /// Creates a configuration; see ``RetryBudget`` for the defaults and why.
        ///
        /// - Parameters:
        ///   - window: How long a deposit counts; at least 1 ms.
        ///   - ratio: The share of calls that may be retried, clamped to 0…1.
        ///   - minimumPerSecond: Retries allowed each second whatever the ratio; at least 0.
        public init(window: Duration = .seconds(10), ratio: Double = 0.2, minimumPerSecond: Int = 10) {
            self.window = max(window, .milliseconds(1))
            self.ratio = ratio.isFinite ? min(1, max(0, ratio)) : 0
            self.minimumPerSecond = max(0, minimumPerSecond)
        }

        /// Finagle's defaults: 20 % of the calls of the last 10 seconds, plus 10 retries a second.
        public static var `default`: Configuration { Configuration() }
    }

    /// The budget's configuration.
    public let configuration: Configuration
    private let stopwatch: Stopwatch
    /// Deposits not yet folded into the window: the one thing every call touches.
    private let pending = Atomic<Int>(0)
    private let state: Locked<RetryBudgetWindow>

    /// Creates a full budget: only the reserve, no deposits.
    ///
    /// - Parameters:
    ///   - configuration: How large the budget is. ``Configuration/default`` by default.
    ///   - clock: The clock the window is measured on; tests pass a manual clock. `ContinuousClock` by default.
    public init(_ configuration: Configuration = .default, clock: any Clock<Duration> = ContinuousClock()) {
        self.configuration = configuration
        self.stopwatch = Stopwatch(clock: clock)
        self.state = Locked(RetryBudgetWindow(configuration))
    }

    /// Counts a call: one token, usable by retries for ``Configuration/window``.
    @inline(__always)
    public func deposit() {
        pending.add(1, ordering: .relaxed)
    }

    /// Takes one token for a retry or a hedged copy; `false` when the budget is spent and the retry must not go.
    public func tryWithdraw() -> Bool {
        let now = stopwatch.elapsed
        let deposits = pending.exchange(0, ordering: .relaxed)
        return state.withLock { window in
            window.fold(deposits, now: now)
            return window.withdraw(now: now)
        }
    }

    /// How many retries the budget would allow now.
    public var balance: Int {
        let now = stopwatch.elapsed
        let deposits = pending.exchange(0, ordering: .relaxed)
        return state.withLock { window in
            window.fold(deposits, now: now)
            return window.balance(now: now)
        }
    }
}

/// The arithmetic of a ``RetryBudget``: deposits and withdrawals over the window (``SlidingCounts``: deposits
/// first, withdrawals second). A plain value; its owner holds the lock.
struct RetryBudgetWindow: Sendable {
    /// The ratio in thousandths, so that the arithmetic is exact: `0.2 × 10` is 2, never 1.999….
    private let permille: Int
    private let reserve: Int
    private var counts: SlidingCounts
    private var lastFold: Duration = .zero

    init(_ configuration: RetryBudget.Configuration) {
        counts = SlidingCounts(window: configuration.window)
        permille = Int((configuration.ratio * 1000).rounded())
        let seconds =
            Double(configuration.window.components.seconds)
            + Double(configuration.window.components.attoseconds) / 1e18
        reserve = Int((Double(configuration.minimumPerSecond) * seconds).rounded(.down))
    }

    /// Adds `deposits` made between the last fold and `now`, spread evenly over the slots between them; those that
    /// fall before the window are dropped, the remainder goes to the latest slot.
    mutating func fold(_ deposits: Int, now: Duration) {
        defer { lastFold = now }
        guard deposits > 0 else { return }
        let last = counts.slotIndex(now)
        let first = min(counts.slotIndex(lastFold), last)
        let span = Int(last - first) + 1
        let each = deposits / span
        let kept = max(first, last - Int64(SlidingCounts.slotCount) + 1)
        if each > 0 {
            for index in kept..<last { counts.add(first: each, inSlot: index) }
        }
        counts.add(first: deposits - each * (span - 1), inSlot: last)
    }

    mutating func withdraw(now: Duration) -> Bool {
        guard balance(now: now) > 0 else { return false }
        counts.add(second: 1, inSlot: counts.slotIndex(now))
        return true
    }

    func balance(now: Duration) -> Int {
        let (deposits, withdrawals) = counts.totals(now: now)
        return deposits * permille / 1000 + reserve - withdrawals
    }
}
