/// Tracks the unstructured tasks that refresh stale responses after they were served
/// (``CachePolicy/staleWhileRevalidate``), so that tests can wait for them instead of sleeping.
///
/// Nothing awaits a refresh on the caller's path: its errors are dropped (the next call sees the cache as the
/// refresh left it), and cancelling the caller does not cancel it.
final class BackgroundRefreshes: Sendable {
    private struct State {
        var running = 0
        var finished = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    /// Refreshes that have finished so far.
    var finishedCount: Int { state.withLock { $0.finished } }

    /// Starts `work` in its own task and counts it until it ends.
    func run(_ work: @escaping @Sendable () async throws -> Void) {
        state.withLock { $0.running += 1 }
        Task {
            try? await work()
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.running -= 1
                state.finished += 1
                guard state.running == 0 else { return [] }
                defer { state.idleWaiters = [] }
                return state.idleWaiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Suspends until no refresh is running.
    func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state in
                if state.running == 0 { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }
}
