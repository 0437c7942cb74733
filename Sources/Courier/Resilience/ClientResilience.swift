import Foundation
import Synchronization

/// What an ``APIClient`` runs of its ``Resilience`` configuration: the budget, the breakers, limits and latencies of
/// the origins it calls, and the hooks the attempt loop calls.
///
/// The hooks run on the caller's executor (`nonisolated(nonsending)`, as the attempt loop does: a plain `async`
/// function would hop to the global executor and back, about 1,000 instructions a call). They keep the common call
/// free: with the defaults, a call that succeeds pays one atomic increment (its
/// deposit) and two atomic loads (no origin has a breaker to consult or feed). Per-origin state is looked up only
/// once an origin has failed within the breaker's window, or when the client hedges or limits concurrency.
final class ClientResilience: Sendable {
    let configuration: Resilience
    /// The client's retry policy, whose rule of what may be sent twice (``RetryPolicy/mayResend(_:)``) decides what
    /// may be hedged, as it decides what may be retried and which event streams reconnect.
    let retryPolicy: RetryPolicy
    private let clock: any Clock<Duration>
    private let instrumentation: Instrumentation
    /// The client's budget (``Resilience/BudgetScope/client``), or `nil`.
    private let budget: RetryBudget?
    /// Per-origin state, looked up by the origin's text.
    private let origins = Locked(Origins())
    /// How many origins have a breaker: while none has, successes are not counted anywhere.
    private let trackedBreakers = Atomic<Int>(0)
    /// Whether every attempt passes a gate (a limit, or hedging), whatever the breakers say.
    private let gatesEveryAttempt: Bool

    fileprivate struct Origins {
        var breakers: [String: CircuitBreaker] = [:]
        var limits: [String: ConcurrencyLimit] = [:]
        var budgets: [String: RetryBudget] = [:]
        var latencies: [String: LatencyWindow] = [:]
    }

    init(
        _ configuration: Resilience, retryPolicy: RetryPolicy, clock: any Clock<Duration>,
        instrumentation: Instrumentation
    ) {
        self.configuration = configuration
        self.retryPolicy = retryPolicy
        self.clock = clock
        self.instrumentation = instrumentation
        budget =
            configuration.budgetScope == .client ? configuration.retryBudget.map { RetryBudget($0, clock: clock) } : nil
        gatesEveryAttempt =
            configuration.concurrencyLimit != nil || configuration.hedging != nil
            || (configuration.retryBudget != nil && configuration.budgetScope == .origin)
    }

    /// How many origins have a breaker now (for tests).
    var trackedOrigins: Int { trackedBreakers.load(ordering: .relaxed) }

    // MARK: Hooks of the Attempt Loop

    /// Hook before an attempt is handed to the transport: deposits the call in the budget (first attempt) and asks the
    /// origin's breaker. `nil`, the common case, means "send as usual"; a grant is handed to
    /// ``send(_:deadline:grant:call:transport:)``, which takes a place under the origin's limit and may hedge.
    ///
    /// Synchronous, so that the attempt loop's async frame gains no suspension point (that frame and its callers' must
    /// fit the flight task's first slab of memory, or every call allocates).
    ///
    /// - Throws: ``APIError/circuitOpen(origin:retryAfter:)``: nothing was sent.
    @inline(__always)
    func admit(_ request: TransportRequest, attempt: Int, call: Call) throws(APIError) -> ResilienceGrant? {
        if attempt == 1 { budget?.deposit() }
        guard gatesEveryAttempt || call.hedging != nil || trackedBreakers.load(ordering: .relaxed) > 0 else {
            return nil
        }
        return try admitGated(request, attempt: attempt, call: call)
    }

    /// Hook in place of the transport's `send`: the transport itself without a grant; with one, the gated send
    /// (hedged if allowed), which releases the place and reports the probe however the attempt ends.
    @inline(__always)
    nonisolated(nonsending) func send(
        _ request: TransportRequest, deadline: TransportDeadline, grant: ResilienceGrant?, call: Call,
        transport: any HTTPTransport
    ) async throws -> TransportResponse {
        guard let grant else { return try await transport.send(request, deadline: deadline) }
        return try await sendGranted(request, deadline: deadline, grant: grant, call: call, transport: transport)
    }

    /// Hook after every attempt: feeds the origin's breaker. Free while the outcome is a success and no origin has a
    /// breaker.
    @inline(__always)
    func record(_ outcome: RetryContext.Outcome, of request: TransportRequest, call: Call) {
        guard configuration.circuitBreaker != nil else { return }
        let failed: Bool
        switch outcome {
        case .response(let response): failed = response.statusCode >= 500
        case .failure(let error):
            guard let isFailure = Self.breakerCounts(error) else { return }
            failed = isFailure
        }
        guard failed || trackedBreakers.load(ordering: .relaxed) > 0 else { return }
        recordSlowly(failed ? .failure : .success, of: request, call: call)
    }

    /// Hook where the retry policy decided to retry: withdraws from the budget; the error to fail with when it is
    /// spent (carrying the attempt's outcome), `nil` to retry.
    @inline(__always)
    func deniedRetry(after outcome: RetryContext.Outcome, of request: TransportRequest, attempt: Int, call: Call)
        -> APIError?
    {
        guard configuration.retryBudget != nil else { return nil }
        return withdrawOrDeny(after: outcome, of: request, attempt: attempt, call: call)
    }

    // MARK: Slow Paths

    @inline(never)
    private func admitGated(_ request: TransportRequest, attempt: Int, call: Call) throws(APIError)
        -> ResilienceGrant?
    {
        let origin = Self.origin(of: request.url)
        let (breaker, limit) = origins.withLock { origins in
            (origins.breakers[origin], configuration.concurrencyLimit.map { origins.limit(origin, $0, clock) })
        }
        if attempt == 1, configuration.budgetScope == .origin { originBudget(origin)?.deposit() }
        var probe: CircuitBreaker?
        if let breaker {
            let (admission, change) = breaker.admitNoting()
            if let change { report(change, origin: origin, call: call) }
            switch admission {
            case .allowed: break
            case .probe: probe = breaker
            case .rejected(let retryAfter):
                instrumentation.count(.circuitRejection)
                call.emit(.circuitRejected(origin: origin, retryAfter: retryAfter))
                throw .circuitOpen(origin: origin, retryAfter: retryAfter)
            }
        }
        // A copy helps an origin that is slow now and then, not one that is failing: while the origin has failures in
        // its breaker's window (a brownout, timeouts under overload), a copy would only add load. gRPC stops hedging
        // the same way, when failures drain its retry throttle.
        // A streamed attempt is never hedged: a copy would be a second transfer of the body.
        let policy = call.hedging ?? configuration.hedging
        let hedging = breaker == nil && call.streamed == nil && retryPolicy.mayResend(request) ? policy : nil
        guard probe != nil || limit != nil || hedging != nil else { return nil }
        return ResilienceGrant(origin: origin, probe: probe, place: limit, hedging: hedging)
    }

    /// Takes a place under the origin's limit, waiting in its queue within the attempt's deadline.
    private nonisolated(nonsending) func acquire(_ limit: ConcurrencyLimit, _ grant: ResilienceGrant, call: Call)
        async throws
    {
        do {
            try await limit.acquire(within: call.limits.nextWait(now: instrumentation.elapsedTime))
        } catch let reason as ShedReason {
            grant.probe?.abandonProbe()
            instrumentation.count(.shed)
            call.emit(.shed(origin: grant.origin, reason: reason))
            throw APIError.shed(origin: grant.origin, reason: reason)
        } catch {
            grant.probe?.abandonProbe()
            throw error
        }
    }

    @inline(never)
    private nonisolated(nonsending) func sendGranted(
        _ request: TransportRequest, deadline: TransportDeadline, grant: ResilienceGrant, call: Call,
        transport: any HTTPTransport
    ) async throws -> TransportResponse {
        try await gated(grant, call: call) {
            grant.hedges
                ? try await self.hedged(request, deadline: deadline, grant: grant, call: call, transport: transport)
                : try await transport.send(request, deadline: deadline)
        }
    }

    /// The transport step of an attempt under the gates `grant` passed: a place under the origin's limit (waited for
    /// within the attempt's deadline), released however the step ends, with the probe's outcome and the latency. A
    /// streamed attempt goes through here with its head as the response: it is never hedged (a copy would be a second
    /// transfer of the body), and its place is given back when the head has arrived.
    nonisolated(nonsending) func gated(
        _ grant: ResilienceGrant, call: Call, _ send: () async throws -> TransportResponse
    ) async throws -> TransportResponse {
        if let place = grant.place { try await acquire(place, grant, call: call) }
        let start = instrumentation.elapsedTime
        do {
            let response = try await send()
            finish(
                grant, failed: response.statusCode >= 500, dropped: [429, 503].contains(response.statusCode),
                latency: instrumentation.elapsedTime - start, call: call)
            return response
        } catch {
            let apiError = error as? APIError
            let failed = apiError.flatMap(Self.breakerCounts)
            var dropped = false
            if case .timedOut? = apiError { dropped = true }
            if case .transport(.timedOut, _)? = apiError { dropped = true }
            finish(grant, failed: failed, dropped: dropped, latency: nil, call: call)
            throw error
        }
    }

    private nonisolated(nonsending) func hedged(
        _ request: TransportRequest, deadline: TransportDeadline, grant: ResilienceGrant, call: Call,
        transport: any HTTPTransport
    ) async throws -> TransportResponse {
        guard let policy = grant.hedging else { return try await transport.send(request, deadline: deadline) }
        let delay = origins.withLock { $0.latencies[grant.origin, default: LatencyWindow()].delay(for: policy.delay) }
        let budget = budget ?? originBudget(grant.origin)
        let instrumentation = instrumentation
        let (response, copy) = try await HedgedSend.race(
            delay: delay, maxCopies: policy.maxCopies, clock: clock,
            mayHedge: { copy in
                guard budget?.tryWithdraw() ?? true else { return false }
                instrumentation.count(.hedgeSent)
                instrumentation.count(.upstreamCall)
                call.emit(.hedgeSent(copy: copy, after: delay))
                return true
            },
            isAcceptable: { $0.statusCode < 500 },
            send: { _ in try await transport.send(request, deadline: deadline) })
        if copy > 1 {
            instrumentation.count(.hedgeWon)
            call.emit(.hedgeWon(copy: copy))
        }
        return response
    }

    /// The end of a granted attempt: the probe's outcome (or its place back, when it has none), the limit's place,
    /// the latency for adaptive hedging.
    private func finish(_ grant: ResilienceGrant, failed: Bool?, dropped: Bool, latency: Duration?, call: Call) {
        if let probe = grant.probe {
            if let failed {
                if let change = probe.recordNoting(failed ? .failure : .success, probe: true) {
                    report(change, origin: grant.origin, call: call)
                }
            } else {
                probe.abandonProbe()
            }
        }
        grant.place?.release(dropped: dropped)
        if let latency, case .percentile? = grant.hedging?.delay {
            origins.withLock { $0.latencies[grant.origin, default: LatencyWindow()].record(latency) }
        }
    }

    @inline(never)
    private func recordSlowly(_ outcome: CircuitBreaker.Outcome, of request: TransportRequest, call: Call) {
        guard let settings = configuration.circuitBreaker else { return }
        let origin = Self.origin(of: request.url)
        let breaker: CircuitBreaker? = origins.withLock { origins in
            if let breaker = origins.breakers[origin] { return breaker }
            guard outcome == .failure else { return nil }
            let breaker = CircuitBreaker(settings, clock: clock)
            origins.breakers[origin] = breaker
            trackedBreakers.add(1, ordering: .relaxed)
            return breaker
        }
        guard let breaker else { return }
        // A closed breaker with no failure left in its window is forgotten: its origin costs nothing again until it
        // fails.
        if outcome == .success, breaker.isIdle {
            let removed = origins.withLock { origins in
                guard origins.breakers[origin] === breaker else { return false }
                origins.breakers[origin] = nil
                return true
            }
            if removed { trackedBreakers.subtract(1, ordering: .relaxed) }
            return
        }
        if let change = breaker.recordNoting(outcome, probe: false) { report(change, origin: origin, call: call) }
    }

    @inline(never)
    private func withdrawOrDeny(
        after outcome: RetryContext.Outcome, of request: TransportRequest, attempt: Int, call: Call
    ) -> APIError? {
        let budget = budget ?? originBudget(Self.origin(of: request.url))
        guard let budget, !budget.tryWithdraw() else { return nil }
        instrumentation.count(.budgetDenial)
        call.emit(.retryBudgetDenied(attempt: attempt))
        switch outcome {
        case .response(let response): return .retryBudgetExhausted(last: .unacceptableStatus(response))
        case .failure(let error): return .retryBudgetExhausted(last: error)
        }
    }

    private func originBudget(_ origin: String) -> RetryBudget? {
        guard configuration.budgetScope == .origin else { return nil }
        return origins.withLock { $0.budget(origin, configuration, clock) }
    }

    private func report(_ phase: CircuitBreaker.Phase, origin: String, call: Call) {
        instrumentation.count(.circuitChange)
        call.emit(.circuitStateChanged(origin: origin, phase: phase))
    }

    // MARK: Rules

    /// Whether an attempt's error counts for the breaker: as a failure (the upstream did not answer) or, for `nil`,
    /// not at all (the client refused it: the breaker itself, the limit, a bad request).
    static func breakerCounts(_ error: APIError) -> Bool? {
        switch error {
        case .transport, .timedOut, .invalidResponse: true
        default: nil
        }
    }

    /// `scheme://host:port`, the key of an origin's state.
    static func origin(of url: URL) -> String {
        guard let origin = Origin(url) else { return url.absoluteString }
        return "\(origin.scheme)://\(origin.host):\(origin.port)"
    }
}

extension ClientResilience.Origins {
    @discardableResult
    fileprivate mutating func budget(_ origin: String, _ configuration: Resilience, _ clock: any Clock<Duration>)
        -> RetryBudget?
    {
        guard let settings = configuration.retryBudget else { return nil }
        if let budget = budgets[origin] { return budget }
        let budget = RetryBudget(settings, clock: clock)
        budgets[origin] = budget
        return budget
    }

    fileprivate mutating func limit(
        _ origin: String, _ settings: ConcurrencyLimit.Configuration, _ clock: any Clock<Duration>
    ) -> ConcurrencyLimit {
        if let limit = limits[origin] { return limit }
        let limit = ConcurrencyLimit(settings, clock: clock)
        limits[origin] = limit
        return limit
    }
}

/// What an attempt holds from the gates it passed: a probe of its origin's breaker, a place under its limit, the
/// right to hedge. Made only when it holds one of them.
final class ResilienceGrant: Sendable {
    let origin: String
    let probe: CircuitBreaker?
    let place: ConcurrencyLimit?
    /// How the attempt hedges, when it may (the request's policy, else the client's).
    let hedging: HedgingPolicy?
    var hedges: Bool { hedging != nil }

    init(origin: String, probe: CircuitBreaker?, place: ConcurrencyLimit?, hedging: HedgingPolicy?) {
        self.origin = origin
        self.probe = probe
        self.place = place
        self.hedging = hedging
    }
}
