/// Runs the unstructured tasks that refresh stale responses after they were served (``CachePolicy/staleWhileRevalidate``,
/// `stale-while-revalidate`), at most one per cache key, and counts them so that tests can wait instead of sleeping.
///
/// Every stale hit asks for a refresh; while one for the same key is running, the others are dropped, so a burst of
/// stale hits costs one upstream request even with coalescing off. This does not depend on the coalescer: the
/// refresh may still join a flight, but nothing here waits for or counts on it.
///
/// Nothing awaits a refresh on the caller's path: its errors are dropped (the next call sees the cache as the
/// refresh left it), and cancelling the caller does not cancel it.
final class BackgroundRefreshes: Sendable {
    private struct State {
        /// The keys whose refresh is running.
        var running: Set<RequestKey> = []
        var finished = 0
        var skipped = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    /// Refreshes that have finished so far.
    var finishedCount: Int { state.withLock { $0.finished } }

    /// Refreshes not started because one for the same key was running.
    var skippedCount: Int { state.withLock { $0.skipped } }

    /// Starts `work` in its own task and counts it until it ends, unless a refresh for `key` is running already.
    ///
    /// - Parameters:
    ///   - key: What the refresh revalidates: the request as sent, with the headers its stored response varies on.
    ///   - work: The refresh.
    func run(key: RequestKey, _ work: @escaping @Sendable () async throws -> Void) {
        let isNew = state.withLock { state in
            guard state.running.insert(key).inserted else {
                state.skipped += 1
                return false
            }
            return true
        }
        guard isNew else { return }
        Task {
            try? await work()
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.running.remove(key)
                state.finished += 1
                guard state.running.isEmpty else { return [] }
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
                if state.running.isEmpty { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }
}
