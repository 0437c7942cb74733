extension APIClient {
    /// Counters of what a client did since it was created; see ``APIClient/metrics``.
    ///
    /// A plain value: take a snapshot, then compare two snapshots to see what happened between them.
    ///
    /// ```swift
    /// let before = client.metrics
    /// _ = try await client.send(APIRequest<User>.get("/me"))
    /// print(client.metrics.upstreamCalls - before.upstreamCalls)  // 0 when the cache or a shared flight answered
    /// ```
    public struct Metrics: Sendable, Hashable {
        /// Calls of ``APIClient``'s `send(_:)`, counted as they start.
        public var requests = 0
        /// Attempts handed to the transport: the requests that really went upstream, retries and resends included.
        public var upstreamCalls = 0
        /// Calls that shared an identical call's flight instead of sending their own.
        public var joined = 0
        /// Calls the cache answered without waiting for the server (fresh, allowed stale, stale-while-revalidate).
        public var cacheHits = 0
        /// Calls the cache could not answer: nothing usable was stored, or the stored response needed revalidation.
        public var cacheMisses = 0
        /// Stored responses confirmed by a `304 Not Modified` and served.
        public var cacheRevalidations = 0
        /// Attempts sent again because the retry policy said so.
        public var retries = 0
        /// Token refreshes started for this client's calls.
        public var tokenRefreshes = 0
        /// Calls that threw an error other than cancellation.
        public var failures = 0
        /// Calls that ended because their task was cancelled.
        public var cancellations = 0
        /// Retries (and hedged copies) not sent because the ``RetryBudget`` was spent.
        public var retryBudgetDenials = 0
        /// Times a ``CircuitBreaker`` of the client moved between closed, open and half-open.
        public var circuitStateChanges = 0
        /// Attempts failed at once by an open ``CircuitBreaker``.
        public var circuitRejections = 0
        /// Hedged copies sent (see ``HedgingPolicy``); each also counts in ``upstreamCalls``.
        public var hedgesSent = 0
        /// Hedged attempts whose answer came from a copy after the first.
        public var hedgesWon = 0
        /// Attempts turned away by a ``ConcurrencyLimit``. The wait for a place is part of the attempt, so a shed
        /// attempt also counts in ``upstreamCalls``, though nothing reached the transport.
        public var shedCalls = 0
        /// Events dropped because a subscriber's buffer was full, over every subscriber so far.
        public var droppedEvents = 0

        /// Creates counters at zero.
        public init() {}
    }

    /// A snapshot of the client's counters. Cheap: a load of each counter and one short critical section, no `await`.
    public var metrics: Metrics { instrumentation.metrics }
}
