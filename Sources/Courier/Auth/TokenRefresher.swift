import Foundation

/// Holds the current ``Credential`` and renews it, one refresh at a time, however many requests need it.
///
/// ## The race it solves
///
/// When an access token expires under load, every request in flight gets `401 Unauthorized` at about
/// the same moment. A client that refreshes on each `401` sends hundreds of refreshes; with rotating
/// refresh tokens all but the first fail and may even revoke the session. A client that refreshes
/// again after a failed refresh turns one outage of the token endpoint into a storm against it.
///
/// `TokenRefresher` makes both impossible by construction. It is an actor with one explicit state:
/// idle, refreshing, or failed. The first caller that needs a new credential starts the refresh; every
/// caller that arrives while it runs waits for that same refresh and gets its result. A caller
/// whose request was rejected with a token that has *already* been replaced gets the current one at
/// once, without a refresh: ``Credential/version`` tells the two cases apart.
///
/// ```swift
/// let refresher = TokenRefresher(credential: saved) { expired in
///     // Called with the credential to renew (nil when there is none); one call at a time.
///     try await auth.renew(using: expired?.refreshToken)
/// }
/// var configuration = APIClient.Configuration()
/// configuration.authenticator = refresher
/// let client = APIClient(baseURL: apiURL, configuration: configuration)
///
/// await refresher.setCredential(afterLogin)  // login
/// await refresher.clear()                    // logout
/// ```
///
/// ``APIClient`` uses it on every request that ``APIRequest/requiresAuthentication``: it takes
/// ``validCredential()`` before each attempt and, on a `401`, calls ``refresh(rejected:)`` and resends
/// once. A refresh started for a client's call shows in that client's ``APIClient/events``
/// (`tokenRefreshStarted`, then `tokenRefreshSucceeded` or `tokenRefreshFailed`), never with the token.
/// The refresher can also be used on its own, with any transport.
///
/// - Important: Concurrency contract.
///   - At most one refresh runs at a time. Every caller that needs a new credential while it runs
///     awaits that same refresh, including callers of ``validCredential()``.
///   - The refresh runs in its own task, never in a caller's: a caller that is cancelled leaves at once
///     with `CancellationError`, and the refresh goes on for the others. A caller bounds its own wait by
///     cancelling its task, for example when its own deadline passes.
///   - No refresh runs longer than `refreshTimeout`, measured on the injected clock. When it passes, the
///     refresh task is cancelled, its result (should it still come) is discarded, and every waiter fails
///     with ``AuthenticationFailure/refreshTimedOut(after:)``. A timeout does not stick: the next caller
///     starts a new refresh, within the refresh limit. A refresh closure that ignores cancellation may
///     then still be running when the next one starts.
///   - A refresh that throws fails every waiter with ``AuthenticationFailure/refreshThrew(_:)``. For a
///     credential the server rejected (`401`), or a missing one, the refresher stays failed: later callers get
///     the same failure without a new refresh, until ``setCredential(_:)`` or ``clear()``. For a credential that
///     only expired it does not stick: the next caller starts a new refresh, within the refresh limit, so a
///     token endpoint that was down for a moment does not leave the refresher failed for good.
///   - An early renewal (the credential is within its leeway of expiry but has not expired, and no caller
///     reported it rejected) runs in the background: nobody waits for it, every caller gets the current
///     credential meanwhile. If it fails or times out it fails no one, and it is tried again after a backoff
///     on the clock (1 s, doubling, at most a quarter of the leeway), never later than the expiry. Once the
///     credential has expired, callers wait for the refresh and a failure fails them as above.
///   - More than `maxRefreshes` refreshes within `window` (on the injected clock) fail with
///     ``AuthenticationFailure/tooManyRefreshes(count:window:)`` instead of refreshing again, unless the
///     refresh would be an early renewal: then the current credential is used until one leaves the window.
///   - Only ``setCredential(_:)`` and ``clear()`` cancel a running refresh before its timeout, and then its
///     result is discarded.
///   - Requests sent from inside the refresh closure through an ``APIClient`` whose authenticator is
///     this refresher are sent without authorization and never wait for the refresh they are part of,
///     so the closure may use the same client without deadlocking. The closure calling
///     ``validCredential()`` or ``refresh(rejected:)`` on this refresher directly, which would wait for
///     itself, fails at once with ``AuthenticationFailure/reentrantRefresh``.
///   - The state changes only in short critical sections on the actor; nothing is held across an
///     `await`, so re-entrant calls always see a consistent state.
public actor TokenRefresher {
    /// The refreshers whose refresh task is the current task (or one of its ancestors).
    @TaskLocal static var activeRefreshes: Set<ObjectIdentifier> = []

    private var state: RefreshState
    private let operation: @Sendable (Credential?) async throws -> Credential
    private let currentDate: @Sendable () -> Date
    private let clock: any Clock<Duration>
    /// Time elapsed on the injected clock since the refresher was created.
    private let stopwatch: Stopwatch

    /// How long a refresh may run before it is cancelled, as configured (within the bounds `init` applies).
    nonisolated let refreshTimeout: Duration

    /// The longest `refreshTimeout` honoured: a longer one would overflow the clock's conversion of its sleep
    /// (and means "never" anyway).
    static let longestRefreshTimeout = Duration.seconds(365 * 24 * 60 * 60)

    /// Creates a refresher.
    ///
    /// - Parameters:
    ///   - credential: The credential to start with, or `nil` to obtain one through `refresh` when it
    ///     is first needed.
    ///   - leeway: How long before its expiry a credential is renewed, so requests never carry a token
    ///     that expires on the way. For a token issued for less than twice the leeway, renewal waits
    ///     until half of its lifetime has passed instead. 60 seconds by default.
    ///   - maxRefreshes: The most refreshes allowed within `window`; one more fails with
    ///     ``AuthenticationFailure/tooManyRefreshes(count:window:)``. 5 by default.
    ///   - window: The span `maxRefreshes` applies to, measured on `clock`. 30 seconds by default.
    ///   - refreshTimeout: How long one refresh may run, measured on `clock`: then it is cancelled and its
    ///     waiters fail with ``AuthenticationFailure/refreshTimedOut(after:)`` (or keep a credential that
    ///     has not expired). 30 seconds by default. A negative value counts as zero, and anything above a
    ///     year as a year.
    ///   - clock: The clock for the refresh limit, the refresh timeout and the backoff of failed early
    ///     renewals. `ContinuousClock` by default.
    ///   - currentDate: The current date, compared with ``Credential/expiresAt``. `Date()` by default.
    ///   - refresh: Returns a new credential. It receives the credential to renew, or `nil` when there
    ///     is none (then obtain one, or throw). It is never called twice at once, unless a call that timed
    ///     out ignores its cancellation. Its errors are kept as the cause of
    ///     ``APIError/authenticationFailed(_:)``. The refresher assigns the version. It must not ask this
    ///     refresher for a credential: that fails with ``AuthenticationFailure/reentrantRefresh``.
    public init(
        credential: Credential?,
        leeway: Duration = .seconds(60),
        maxRefreshes: Int = 5,
        per window: Duration = .seconds(30),
        refreshTimeout: Duration = .seconds(30),
        clock: any Clock<Duration> = ContinuousClock(),
        currentDate: @escaping @Sendable () -> Date = { Date() },
        refresh: @escaping @Sendable (Credential?) async throws -> Credential
    ) {
        self.state = RefreshState(
            credential: credential, now: currentDate(), leeway: leeway, maxRefreshes: maxRefreshes, window: window)
        self.operation = refresh
        self.currentDate = currentDate
        self.clock = clock
        self.stopwatch = Stopwatch(clock: clock)
        self.refreshTimeout = min(max(refreshTimeout, .zero), Self.longestRefreshTimeout)
    }

    // MARK: Inspecting

    /// The current credential, with the version the refresher assigned; `nil` before the first one is
    /// obtained and after ``clear()``.
    public var credential: Credential? { state.credential }

    /// How many refreshes have started since the refresher was created, for metrics and tests.
    public var refreshCount: Int { state.refreshCount }

    /// Whether a refresh is running (for tests of renewals that run in the background).
    var isRefreshing: Bool {
        if case .refreshing = state.phase { return true }
        return false
    }

    /// How many callers are waiting for the running refresh.
    var waiterCount: Int { state.waiters.count }

    /// Whether the current task is running this refresher's refresh closure.
    nonisolated var isRefreshingInCurrentTask: Bool {
        Self.activeRefreshes.contains(ObjectIdentifier(self))
    }

    // MARK: Getting a Credential

    /// Returns a credential to send, renewing it first when it is due (within the leeway of its expiry)
    /// or when there is none.
    ///
    /// - Returns: The current credential, or the one the refresh produced.
    /// - Throws: ``APIError/authenticationFailed(_:)`` when the refresh fails, times out, failed before,
    ///   would exceed the limit, or is the caller's own (called from the refresh closure);
    ///   `CancellationError` when the calling task is cancelled (the refresh goes on).
    /// - Important: A credential due for renewal that has not expired is returned at once, and renewed in the
    ///   background. While a refresh for a missing, expired or rejected credential runs, this waits for it.
    public func validCredential() async throws -> Credential {
        try await credential(rejecting: nil)
    }

    /// Returns a credential to use in place of one the server rejected (`401`).
    ///
    /// If `rejected` is older than the current credential, the current one is returned at once without
    /// a refresh: the request was sent with a token that had already been replaced. Otherwise this
    /// starts the refresh, or joins the one already running, and returns its result.
    ///
    /// - Parameter rejected: The credential the rejected request was sent with.
    /// - Returns: A newer credential than `rejected`.
    /// - Throws: ``APIError/authenticationFailed(_:)`` when the refresh fails, times out, failed before,
    ///   would exceed the limit, or is the caller's own (called from the refresh closure);
    ///   `CancellationError` when the calling task is cancelled (the refresh goes on).
    public func refresh(rejected: Credential) async throws -> Credential {
        try await credential(rejecting: rejected)
    }

    // MARK: Signing In and Out

    /// Installs a credential, for example after a login, with a version higher than any before.
    ///
    /// A failed state and the refresh history are cleared. A running refresh is cancelled and its
    /// result discarded; the callers waiting for it get this credential.
    ///
    /// - Parameter credential: The new credential; its version is replaced.
    /// - Returns: The credential as installed, with its version.
    @discardableResult
    public func setCredential(_ credential: Credential) -> Credential {
        let (installed, superseded) = state.setCredential(credential, now: currentDate())
        superseded.tasks?.cancel()
        for waiter in superseded.waiters { waiter.resume(returning: installed) }
        return installed
    }

    /// Removes the credential, for example at logout.
    ///
    /// A failed state and the refresh history are cleared. A running refresh is cancelled and its
    /// result discarded; the callers waiting for it fail with ``AuthenticationFailure/signedOut``.
    /// The next call that needs a credential calls the refresh closure with `nil`.
    public func clear() {
        let superseded = state.clear()
        superseded.tasks?.cancel()
        for waiter in superseded.waiters { waiter.resume(throwing: APIError.authenticationFailed(.signedOut)) }
    }

    // MARK: Refreshing

    /// How long one caller may wait for a refresh, on its client's ``DeadlineScheduler``.
    struct WaitLimit: Sendable {
        let scheduler: DeadlineScheduler
        let timeout: Duration
    }

    /// ``validCredential()`` for a caller that leaves with ``APIError/timedOut(_:)`` once `limit` passes while it
    /// waits for a refresh; the refresh goes on for the others. Nothing is scheduled when no wait is needed.
    func validCredential(within limit: WaitLimit?) async throws -> Credential {
        try await credential(rejecting: nil, within: limit)
    }

    /// ``refresh(rejected:)`` with the caller's own bound on the wait, as ``validCredential(within:)``.
    func refresh(rejected: Credential, within limit: WaitLimit?) async throws -> Credential {
        try await credential(rejecting: rejected, within: limit)
    }

    private func credential(rejecting rejected: Credential?, within limit: WaitLimit? = nil) async throws -> Credential
    {
        try Task.checkCancellation()
        switch state.answer(rejecting: rejected, now: currentDate(), elapsed: { stopwatch.elapsed }) {
        case .credential(let credential): return credential
        case .failure(let failure): throw APIError.authenticationFailed(failure)
        case .wait: break
        }
        // The refresh closure would wait for the refresh it is part of, that is, for itself.
        guard !isRefreshingInCurrentTask else { throw APIError.authenticationFailed(.reentrantRefresh) }
        let waiterID = state.makeID()
        let deadline = limit.map { limit in
            limit.scheduler.schedule(after: limit.timeout) {
                Task { await self.leave(waiterID, with: APIError.timedOut(limit.timeout)) }
            }
        }
        defer { if let limit, let deadline { limit.scheduler.cancel(deadline) } }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: RefreshState.Waiter) in
                // Re-checked here, on the actor: a cancellation that raced ahead of registration must not
                // leave this caller waiting, because its `leave` may already have run and found nothing.
                guard !Task.isCancelled else {
                    waiter.resume(throwing: CancellationError())
                    return
                }
                register(waiter, id: waiterID, rejecting: rejected)
            }
        } onCancel: {
            // Runs outside the actor, in whichever thread cancels; hop on to withdraw the waiter.
            Task { await self.leave(waiterID) }
        }
    }

    /// Registers a waiter; the state is asked again because it may have changed since the first look.
    private func register(_ waiter: RefreshState.Waiter, id: UInt64, rejecting rejected: Credential?) {
        switch state.register(waiter, id: id, rejecting: rejected, now: currentDate(), elapsed: stopwatch.elapsed) {
        case .joined:
            break
        case .resume(let waiter, let outcome):
            waiter.resume(with: outcome)
        case .start(let refreshID, let credential, let resuming):
            let tasks = Self.launch(
                refreshID, from: credential, on: self, operation: operation, timeout: refreshTimeout, clock: clock)
            // Neither task can end the refresh before this line: `finish` needs the actor, which we hold.
            state.attach(tasks, to: refreshID)
            if let (waiter, current) = resuming { waiter.resume(returning: current) }
        }
    }

    /// Starts the refresh, and the timer that bounds it, from a nonisolated context, so the closure never runs
    /// on this actor. The tasks inherit the caller's priority and task-local values, but not its cancellation.
    ///
    /// The refresh is reported to the call that needs it, if a client's call does (read here, in that call's
    /// task): started now, ended by whichever of the two tasks ends it first.
    private static func launch(
        _ refreshID: UInt64,
        from credential: Credential?,
        on refresher: TokenRefresher,
        operation: @escaping @Sendable (Credential?) async throws -> Credential,
        timeout: Duration,
        clock: any Clock<Duration>
    ) -> RefreshState.Tasks {
        let scope = EventScope.current
        scope?.refreshStarted()
        let refresh = Task {
            let result: RefreshState.Result
            do {
                let active = activeRefreshes.union([ObjectIdentifier(refresher)])
                result = .refreshed(try await $activeRefreshes.withValue(active) { try await operation(credential) })
            } catch {
                result = .failed(.refreshThrew(error))
            }
            await refresher.finish(refreshID, with: result, reportingTo: scope)
        }
        // One sleep per refresh, which is rare; it is cancelled (and does nothing) when the refresh ends first.
        let timer = Task {
            guard (try? await clock.sleep(for: timeout)) != nil else { return }
            await refresher.finish(refreshID, with: .failed(.refreshTimedOut(after: timeout)), reportingTo: scope)
        }
        return RefreshState.Tasks(refresh: refresh, timer: timer)
    }

    /// Ends the refresh with its result or its timeout, whichever comes first; later ones find it ended.
    private func finish(
        _ refreshID: UInt64, with result: RefreshState.Result, reportingTo scope: EventScope?
    ) {
        let ending = state.finish(refreshID, with: result, now: currentDate(), elapsed: stopwatch.elapsed)
        guard let ending else { return }
        ending.tasks?.cancel()
        scope?.refreshEnded(result.asResult)
        for waiter in ending.waiters { waiter.resume(with: ending.outcome) }
    }

    /// Withdraws a caller that was cancelled or whose wait ran out; the refresh goes on. A no-op if the caller was
    /// already resumed.
    private func leave(_ waiterID: UInt64, with error: any Error = CancellationError()) {
        state.removeWaiter(waiterID)?.resume(throwing: error)
    }

}
