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
        if pending.add(1, ordering: .relaxed).newValue == Self.foldEvery { foldPending() }
    }

    /// How many deposits wait unfolded at most. A fold takes their time as the span since the last one, so a burst
    /// left unfolded until a retry was spread over all that time, and its deposits paid for retries after they had
    /// left the window (320 calls, then 10.5 s of quiet, left a balance of 158 retries instead of the reserve's 100).
    /// One clock read and one lock per 64 calls.
    static let foldEvery = 64

    @inline(never)
    private func foldPending() {
        let now = stopwatch.elapsed
        let deposits = pending.exchange(0, ordering: .relaxed)
        state.withLock { $0.fold(deposits, now: now) }
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
    /// Slots of a hundredth of the window: with ten, a total covered 9 to 10 tenths of it, on a grid that starts when
    /// the client does, so a fault as long as the window could draw on withdrawals made just before the grid's edge a
    /// second time (the resilience report's brownout spent 31.5 % instead of 30 %). Only a retry reads all 100.
    static let slotCount = 100

    /// The ratio in thousandths, so that the arithmetic is exact: `0.2 × 10` is 2, never 1.999….
    private let permille: Int
    private let reserve: Int
    private var counts: SlidingCounts
    private var lastFold: Duration = .zero

    init(_ configuration: RetryBudget.Configuration) {
        counts = SlidingCounts(window: configuration.window, slotCount: Self.slotCount)
        permille = Int((configuration.ratio * 1000).rounded())
        let seconds =
            Double(configuration.window.components.seconds)
            + Double(configuration.window.components.attoseconds) / 1e18
        reserve = Int((Double(configuration.minimumPerSecond) * seconds).rounded(.down))
    }

    /// Adds `deposits` made between the last fold and `now`, spread over the slots between them in proportion to how
    /// much of that time each slot holds (the deposits were made at a steady rate, as far as anyone knows); those that
    /// fall before the window are dropped. An even split per slot, with the remainder in the latest, credited a slot
    /// that had just begun with a whole slot's share or more: a brownout after a quiet lead spent retries that calls
    /// made before it had paid for.
    mutating func fold(_ deposits: Int, now: Duration) {
        defer { lastFold = now }
        guard deposits > 0 else { return }
        let last = counts.slotIndex(now)
        let start = min(lastFold, now).nanoseconds
        let elapsed = Double(now.nanoseconds - start)
        let first = max(counts.slotIndex(.nanoseconds(start)), last - Int64(counts.slotCount) + 1)
        // The deposits made before the end of slot `index`: all of them by the end of the latest.
        func madeBy(endOf index: Int64) -> Int {
            guard index < last else { return deposits }
            let before = Double((index + 1) * counts.slotWidth - start)
            guard elapsed > 0, before > 0 else { return 0 }
            return Int((Double(deposits) * before / elapsed).rounded(.down))
        }
        var credited = madeBy(endOf: first - 1)
        for index in first...last {
            let made = madeBy(endOf: index)
            if made > credited { counts.add(first: made - credited, inSlot: index) }
            credited = made
        }
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
