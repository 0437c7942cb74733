/// How an ``APIClient`` protects an upstream, and itself, when the upstream degrades: a retry budget, a circuit
/// breaker per origin, hedged requests and a limit on calls in flight per origin. See
/// <doc:ResilienceMechanisms> for what each does and when to change it.
///
/// ```swift
/// var configuration = APIClient.Configuration()
/// configuration.resilience.hedging = HedgingPolicy(delay: .percentile(0.95))
/// configuration.resilience.concurrencyLimit = .fixed(64, queue: 128)
/// ```
///
/// The default (``default``) keeps the retry budget and the circuit breaker on, and hedging and the concurrency limit
/// off: the first two only ever send fewer requests than a plain retry policy would, while the last two need a number
/// only the caller knows (how much extra load the upstream can take, how many calls it serves at once).
public struct Resilience: Sendable, Hashable {
    /// Which calls share one retry budget.
    public enum BudgetScope: Sendable, Hashable {
        /// One budget for the client: the right bound for a client that calls one upstream.
        case client
        /// One budget per origin, so that a failing origin cannot spend the retries of a healthy one. Each call then
        /// looks up its origin's budget.
        case origin
    }

    /// The retry budget: retries and hedged copies draw from it. ``RetryBudget/Configuration/default`` (20 % of calls
    /// plus 10 a second over 10 seconds) by default; `nil` retries as the ``RetryPolicy`` says, unbounded.
    public var retryBudget: RetryBudget.Configuration?
    /// Which calls share a retry budget. ``BudgetScope/client`` by default.
    public var budgetScope: BudgetScope
    /// The circuit breaker each origin gets. ``CircuitBreaker/Configuration/default`` by default; `nil` for none.
    public var circuitBreaker: CircuitBreaker.Configuration?
    /// Hedged requests for idempotent calls. `nil` (off) by default.
    public var hedging: HedgingPolicy?
    /// The limit on calls in flight each origin gets. `nil` (none) by default.
    public var concurrencyLimit: ConcurrencyLimit.Configuration?

    /// Creates a resilience configuration; every parameter defaults to the value of ``default``.
    ///
    /// - Parameters:
    ///   - retryBudget: The retry budget, or `nil` for none.
    ///   - budgetScope: Which calls share a retry budget.
    ///   - circuitBreaker: The circuit breaker of each origin, or `nil` for none.
    ///   - hedging: Hedged requests, or `nil` for none.
    ///   - concurrencyLimit: The limit on calls in flight per origin, or `nil` for none.
    public init(
        retryBudget: RetryBudget.Configuration? = .default, budgetScope: BudgetScope = .client,
        circuitBreaker: CircuitBreaker.Configuration? = .default, hedging: HedgingPolicy? = nil,
        concurrencyLimit: ConcurrencyLimit.Configuration? = nil
    ) {
        self.retryBudget = retryBudget
        self.budgetScope = budgetScope
        self.circuitBreaker = circuitBreaker
        self.hedging = hedging
        self.concurrencyLimit = concurrencyLimit
    }

    /// A retry budget and a circuit breaker per origin; no hedging, no concurrency limit.
    public static var `default`: Resilience { Resilience() }

    /// Nothing: retries as the ``RetryPolicy`` says, every call sent. What Courier did before resilience existed.
    public static var off: Resilience {
        Resilience(retryBudget: nil, circuitBreaker: nil)
    }
}
