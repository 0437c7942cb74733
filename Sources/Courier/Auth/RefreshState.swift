import Foundation

/// The state of a ``TokenRefresher`` as a plain value: the actor asks it what to do and then does it
/// (resumes waiters, starts or cancels the refresh task) after the state has changed.
///
/// Nothing here awaits, so every transition is one critical section on the actor.
struct RefreshState {
    typealias Waiter = CheckedContinuation<Credential, any Error>

    enum Phase {
        /// No refresh is running: callers get `credential` unless it is due for renewal.
        case idle
        /// One refresh is running; every caller that needs a credential waits for it in `waiters`.
        case refreshing(id: UInt64, task: Task<Void, Never>?)
        /// The last refresh failed: callers get this failure, without a new refresh, until a new
        /// credential is installed.
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
        case resume(Waiter, Result<Credential, APIError>)
        case start(refreshID: UInt64, from: Credential?)
    }

    /// What was in progress when a credential was installed or cleared by hand.
    struct Superseded {
        let task: Task<Void, Never>?
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
    func answer(rejecting rejected: Credential?, now: Date) -> Answer {
        switch phase {
        case .refreshing:
            return .wait
        case .failed(let failure):
            return .failure(failure)
        case .idle:
            guard let credential else { return .wait }
            // A rejected credential older than the current one was already replaced: use the current one.
            if let rejected, rejected.version >= credential.version { return .wait }
            if let renewalDate, renewalDate <= now { return .wait }
            return .credential(credential)
        }
    }

    /// Registers a caller that could not be answered at once: it joins the running refresh, starts one,
    /// or (if the state changed meanwhile, or refreshing now would exceed the limit) is answered at once.
    mutating func register(
        _ waiter: Waiter, id: UInt64, rejecting rejected: Credential?, now: Date, elapsed: Duration
    ) -> Registration {
        if case .refreshing = phase {
            waiters[id] = waiter
            return .joined
        }
        switch answer(rejecting: rejected, now: now) {
        case .credential(let credential): return .resume(waiter, .success(credential))
        case .failure(let failure): return .resume(waiter, .failure(.authenticationFailed(failure)))
        case .wait: break
        }
        recentRefreshes.removeAll { elapsed - $0 >= window }
        guard recentRefreshes.count < maxRefreshes else {
            let failure = AuthenticationFailure.tooManyRefreshes(count: recentRefreshes.count, window: window)
            return .resume(waiter, .failure(.authenticationFailed(failure)))
        }
        recentRefreshes.append(elapsed)
        refreshCount += 1
        let refreshID = makeID()
        phase = .refreshing(id: refreshID, task: nil)
        waiters[id] = waiter
        return .start(refreshID: refreshID, from: credential)
    }

    /// Keeps the task of the refresh just started, so that installing a credential by hand can cancel it.
    mutating func attach(_ task: Task<Void, Never>, to refreshID: UInt64) {
        guard case .refreshing(refreshID, nil) = phase else { return }
        phase = .refreshing(id: refreshID, task: task)
    }

    /// Removes a caller that cancelled; `nil` when it was already resumed.
    mutating func removeWaiter(_ id: UInt64) -> Waiter? {
        waiters.removeValue(forKey: id)
    }

    // MARK: Changing the Credential

    /// Ends the refresh `refreshID` with its result; `nil` when that refresh was superseded meanwhile
    /// (a credential was installed or cleared by hand), in which case its result is dropped.
    mutating func finish(
        _ refreshID: UInt64, with result: Result<Credential, any Error>, now: Date
    ) -> (waiters: [Waiter], outcome: Result<Credential, APIError>)? {
        guard case .refreshing(refreshID, _) = phase else { return nil }
        let released = Array(waiters.values)
        waiters = [:]
        switch result {
        case .success(let credential):
            phase = .idle
            return (released, .success(install(credential, now: now)))
        case .failure(let error):
            let failure = AuthenticationFailure.refreshThrew(error)
            phase = .failed(failure)
            return (released, .failure(.authenticationFailed(failure)))
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
        return superseded
    }

    private mutating func supersede() -> Superseded {
        var task: Task<Void, Never>?
        if case .refreshing(_, let running) = phase { task = running }
        let superseded = Superseded(task: task, waiters: Array(waiters.values))
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
}
