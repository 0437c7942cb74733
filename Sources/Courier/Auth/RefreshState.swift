import Foundation

/// The state of a ``TokenRefresher`` as a plain value: the actor asks it what to do and then does it
/// (resumes waiters, starts or cancels the refresh and its timer) after the state has changed.
///
/// Nothing here awaits, so every transition is one critical section on the actor.
struct RefreshState {
    typealias Waiter = CheckedContinuation<Credential, any Error>

    /// The tasks of the running refresh: the one running the refresh closure, and the timer that ends
    /// the refresh when it takes longer than the refresher's timeout. Both are cancelled when it ends.
    struct Tasks {
        let refresh: Task<Void, Never>
        let timer: Task<Void, Never>

        func cancel() {
            refresh.cancel()
            timer.cancel()
        }
    }

    enum Phase {
        /// No refresh is running: callers get `credential` unless it is due for renewal.
        case idle
        /// One refresh is running; every caller that needs a credential waits for it in `waiters`.
        case refreshing(id: UInt64, tasks: Tasks?)
        /// The last refresh threw for a credential the server rejected (or for none): callers get this failure,
        /// without a new refresh, until a new credential is installed. A refresh that threw for a credential that
        /// had only expired does not end here (see ``finish(_:with:now:elapsed:)``).
        case failed(AuthenticationFailure)
    }

    /// What a caller gets without waiting.
    enum Answer {
        case credential(Credential)
        case failure(AuthenticationFailure)
        /// Wait for the running refresh, or start one.
        case wait
    }

    /// What the actor must do once a waiter is registered.
    enum Registration {
        case joined
        case resume(Waiter, Swift.Result<Credential, APIError>)
        /// Start refresh `refreshID`. With `resuming`, the refresh is an early renewal of a still-valid credential:
        /// the caller gets that credential at once and the renewal runs in the background.
        case start(refreshID: UInt64, from: Credential?, resuming: (Waiter, Credential)?)
    }

    /// What a refresh produced: a credential, or why there is none (the closure threw, or it timed out).
    enum Result {
        case refreshed(Credential)
        case failed(AuthenticationFailure)

        /// The result as a caller of the refresh closure would see it.
        var asResult: Swift.Result<Credential, APIError> {
            switch self {
            case .refreshed(let credential): .success(credential)
            case .failed(let failure): .failure(.authenticationFailed(failure))
            }
        }
    }

    /// How a refresh ended: the waiters to resume with `outcome`, and the tasks to cancel.
    struct Ending {
        let waiters: [Waiter]
        let outcome: Swift.Result<Credential, APIError>
        let tasks: Tasks?
    }

    /// What was in progress when a credential was installed or cleared by hand.
    struct Superseded {
        let tasks: Tasks?
        let waiters: [Waiter]
    }

    let leeway: Duration
    let maxRefreshes: Int
    let window: Duration

    private(set) var credential: Credential?
    private(set) var phase = Phase.idle
    /// Refreshes started since the refresher was created.
    private(set) var refreshCount = 0
    /// The callers waiting for the running refresh; empty unless `phase` is `.refreshing`. Kept outside
    /// `phase` so that joining mutates the dictionary in place instead of copying it out of the enum.
    private(set) var waiters: [UInt64: Waiter] = [:]
    /// When the current credential is renewed ahead of its expiry; `nil` when it has no known expiry.
    private var renewalDate: Date?
    /// Whether a caller reported that the server rejected the current credential (a `401`): a failed
    /// refresh can then no longer fall back on it.
    private var isRejected = false
    /// Set once an early renewal of the still-valid current credential failed (or was refused by the
    /// refresh limit): how many renewals failed in a row, and the time on the clock before which the
    /// credential is used as it is instead of being renewed again.
    private var renewalRetry: (failures: Int, notBefore: Duration)?
    /// The highest version assigned: installing or clearing a credential always moves past it.
    private var lastVersion = 0
    /// When the refreshes inside the current window started, as time elapsed on the injected clock.
    private var recentRefreshes: [Duration] = []
    private var lastID: UInt64 = 0

    init(credential: Credential?, now: Date, leeway: Duration, maxRefreshes: Int, window: Duration) {
        self.leeway = leeway
        self.maxRefreshes = max(0, maxRefreshes)
        self.window = window
        if let credential { install(credential, now: now) }
    }

    mutating func makeID() -> UInt64 {
        lastID &+= 1
        return lastID
    }

    // MARK: Answering Callers

    /// The answer for a caller that needs a credential, `rejected` being the one the server just refused.
    /// `elapsed` reads the clock; it is called only while an early renewal is backing off.
    func answer(rejecting rejected: Credential?, now: Date, elapsed: () -> Duration) -> Answer {
        switch phase {
        case .refreshing:
            // An early renewal runs in the background: its credential is still good for whoever was not refused it.
            if rejected == nil, let current = fallback(now: now) { return .credential(current) }
            return .wait
        case .failed(let failure):
            return .failure(failure)
        case .idle:
            guard let credential else { return .wait }
            // A rejected credential older than the current one was already replaced: use the current one.
            if let rejected, rejected.version >= credential.version { return .wait }
            guard let renewalDate, renewalDate <= now else { return .credential(credential) }
            // An early renewal failed: keep the credential until the backoff ends, but never past its expiry.
            if let renewalRetry, fallback(now: now) != nil, elapsed() < renewalRetry.notBefore {
                return .credential(credential)
            }
            return .wait
        }
    }

    /// Registers a caller that could not be answered at once: it joins the running refresh, starts one,
    /// or (if the state changed meanwhile, or refreshing now would exceed the limit) is answered at once.
    mutating func register(
        _ waiter: Waiter, id: UInt64, rejecting rejected: Credential?, now: Date, elapsed: Duration
    ) -> Registration {
        if let rejected, let credential, rejected.version >= credential.version { isRejected = true }
        if case .refreshing = phase {
            waiters[id] = waiter
            return .joined
        }
        switch answer(rejecting: rejected, now: now, elapsed: { elapsed }) {
        case .credential(let credential): return .resume(waiter, .success(credential))
        case .failure(let failure): return .resume(waiter, .failure(.authenticationFailed(failure)))
        case .wait: break
        }
        recentRefreshes.removeAll { elapsed - $0 >= window }
        guard recentRefreshes.count < maxRefreshes else {
            if let credential = fallback(now: now) {
                // Too many refreshes for an early renewal: keep the valid credential until one leaves the window.
                let notBefore = (recentRefreshes.first ?? elapsed) + window
                renewalRetry = (renewalRetry?.failures ?? 0, notBefore)
                return .resume(waiter, .success(credential))
            }
            let failure = AuthenticationFailure.tooManyRefreshes(count: recentRefreshes.count, window: window)
            return .resume(waiter, .failure(.authenticationFailed(failure)))
        }
        recentRefreshes.append(elapsed)
        refreshCount += 1
        let refreshID = makeID()
        phase = .refreshing(id: refreshID, tasks: nil)
        if rejected == nil, let current = fallback(now: now) {
            return .start(refreshID: refreshID, from: credential, resuming: (waiter, current))
        }
        waiters[id] = waiter
        return .start(refreshID: refreshID, from: credential, resuming: nil)
    }

    /// Keeps the tasks of the refresh just started, so that its end, its timeout or a credential installed
    /// by hand can cancel them.
    mutating func attach(_ tasks: Tasks, to refreshID: UInt64) {
        guard case .refreshing(refreshID, nil) = phase else { return }
        phase = .refreshing(id: refreshID, tasks: tasks)
    }

    /// Removes a caller that cancelled; `nil` when it was already resumed.
    mutating func removeWaiter(_ id: UInt64) -> Waiter? {
        waiters.removeValue(forKey: id)
    }

    /// The current credential when a failed refresh may fall back on it: it was renewed early, so it is
    /// not expired, and no caller reported it rejected. A credential without a known expiry never is:
    /// it is only refreshed when it is rejected or missing.
    private func fallback(now: Date) -> Credential? {
        guard let credential, !isRejected, let expiresAt = credential.expiresAt, now < expiresAt else { return nil }
        return credential
    }

    // MARK: Changing the Credential

    /// Ends the refresh `refreshID` with its result (a credential, the error it threw, or its timeout); `nil`
    /// when that refresh ended already or was superseded (a credential installed or cleared by hand).
    ///
    /// A failure of an early renewal falls back on the still-valid credential and schedules the next
    /// renewal after a backoff. Any other failure fails the waiters. A thrown error also sticks when the server
    /// rejected the credential or there is none: the refresh cannot replace what the server refused, and refreshing
    /// again for every caller would hammer the token endpoint. It does not stick for a credential that merely
    /// expired, nor does a timeout: neither says anything final about the credential (the endpoint may have been
    /// down for a moment), so the next caller tries again, within the refresh limit. Sticking there left the
    /// refresher failed for good after one blip, until someone installed a credential by hand.
    mutating func finish(
        _ refreshID: UInt64, with result: Result, now: Date, elapsed: Duration
    ) -> Ending? {
        guard case .refreshing(refreshID, let tasks) = phase else { return nil }
        let released = Array(waiters.values)
        waiters = [:]
        phase = .idle
        switch result {
        case .refreshed(let credential):
            return Ending(waiters: released, outcome: .success(install(credential, now: now)), tasks: tasks)
        case .failed(let failure):
            if let credential = fallback(now: now) {
                let failures = (renewalRetry?.failures ?? 0) + 1
                renewalRetry = (failures, elapsed + Self.renewalBackoff(afterFailures: failures, leeway: leeway))
                return Ending(waiters: released, outcome: .success(credential), tasks: tasks)
            }
            if case .refreshThrew = failure, isRejected || credential == nil { phase = .failed(failure) }
            return Ending(waiters: released, outcome: .failure(.authenticationFailed(failure)), tasks: tasks)
        }
    }

    /// Installs a credential by hand (a login): any failure and refresh history is forgotten, and a
    /// running refresh is returned so that it can be cancelled and its waiters given this credential.
    mutating func setCredential(_ newCredential: Credential, now: Date) -> (Credential, Superseded) {
        let superseded = supersede()
        return (install(newCredential, now: now), superseded)
    }

    /// Removes the credential (a logout), like ``setCredential(_:now:)`` otherwise.
    mutating func clear() -> Superseded {
        let superseded = supersede()
        lastVersion += 1
        credential = nil
        renewalDate = nil
        isRejected = false
        renewalRetry = nil
        return superseded
    }

    private mutating func supersede() -> Superseded {
        var tasks: Tasks?
        if case .refreshing(_, let running) = phase { tasks = running }
        let superseded = Superseded(tasks: tasks, waiters: Array(waiters.values))
        waiters = [:]
        phase = .idle
        recentRefreshes = []
        return superseded
    }

    @discardableResult
    private mutating func install(_ newCredential: Credential, now: Date) -> Credential {
        lastVersion += 1
        var installed = newCredential
        installed.version = lastVersion
        credential = installed
        renewalDate = installed.expiresAt.map { Self.renewalDate(expiresAt: $0, installedAt: now, leeway: leeway) }
        isRejected = false
        renewalRetry = nil
        return installed
    }

    /// `leeway` before the expiry, but never before half the lifetime left at installation has passed:
    /// a token issued for less than twice the leeway would otherwise be renewed on every call.
    ///
    /// The leeway is clamped to `0 ... Duration.saturationLimit`: a negative one would renew after the expiry, and
    /// one of `.seconds(Int64.max)` simply means "renew halfway".
    static func renewalDate(expiresAt: Date, installedAt now: Date, leeway: Duration) -> Date {
        let early = expiresAt.addingTimeInterval(-leeway.saturatedDelay.timeInterval)
        let halfway = now.addingTimeInterval(expiresAt.timeIntervalSince(now) / 2)
        return max(early, halfway)
    }

    /// How long to keep a still-valid credential after `failures` early renewals failed in a row before
    /// trying again: 1 s, doubling with each failure, at most a quarter of the leeway (but at least 1 s),
    /// so that several attempts fit before the expiry without hammering a token endpoint that is down.
    static func renewalBackoff(afterFailures failures: Int, leeway: Duration) -> Duration {
        let cap = max(leeway / 4, .seconds(1))
        let exponent = min(max(failures - 1, 0), 30)
        return min(cap, .seconds(1 << exponent))
    }
}
