/// The deadline of a streamed attempt that sends a body: `idle` from the attempt's start, pushed back each time the
/// transport reads a chunk of the body, and never past the end of the whole call.
///
/// Why: a fixed deadline from the start would bound the whole upload, so a 1 GiB body on a slow link failed with
/// ``APIError/timedOut(_:)`` while its bytes were flowing. Counted from the last chunk read, the timeout bounds each
/// wait for the transport to take more of the body, then the wait for the response's head after the last chunk, as
/// it bounds each wait for a chunk of a streamed response.
///
/// One timer at a time: reading a chunk only records the time; when the timer fires early because chunks came since,
/// it is set again for `idle` after the last one.
final class SendingDeadline: Sendable {
    private struct State {
        /// When the transport last read a chunk, on the scheduler's time.
        var lastRead: Duration
        /// The timer now set, if any.
        var timer: UInt64?
        var isCancelled = false
    }

    private let idle: Duration
    private let end: Duration?
    private let scheduler: DeadlineScheduler
    private let state: Locked<State>

    /// - Parameters:
    ///   - idle: The longest wait without the transport reading the body (the attempt's timeout).
    ///   - end: When the whole call must be over (``CallLimits/end``), or `nil`.
    init(idle: Duration, end: Duration?, scheduler: DeadlineScheduler) {
        self.idle = idle
        self.end = end
        self.scheduler = scheduler
        state = Locked(State(lastRead: scheduler.elapsed))
    }

    /// Records that the transport read (or sent) a part of the body now.
    func bodyWasSent() {
        let now = scheduler.elapsed
        state.withLock { $0.lastRead = now }
    }

    /// Calls `expire` once the deadline passes, unless ``cancel()`` comes first.
    func start(_ expire: @escaping @Sendable () -> Void) {
        setTimer(at: state.withLock { $0.lastRead }, expire)
    }

    /// Stops the timer; `expire` will not be called (if it has not been).
    func cancel() {
        let timer = state.withLock { state -> UInt64? in
            state.isCancelled = true
            defer { state.timer = nil }
            return state.timer
        }
        if let timer { scheduler.cancel(timer) }
    }

    /// Sets the timer for `idle` after `lastRead`, cut to the call's end.
    private func setTimer(at lastRead: Duration, _ expire: @escaping @Sendable () -> Void) {
        var due = lastRead.saturatingAdding(idle)
        if let end { due = min(due, end) }
        // Scheduled under the lock, as the idle timeout of a streamed response does: the scheduler never calls back
        // while holding its own lock, and `cancel` then always finds the timer it must cancel.
        state.withLock { state in
            guard !state.isCancelled else { return }
            state.timer = scheduler.schedule(at: due) { [self] in fire(expire) }
        }
    }

    /// The timer fired: expire, unless the body was read since the timer was set and time is left.
    private func fire(_ expire: @escaping @Sendable () -> Void) {
        let (lastRead, isCancelled) = state.withLock { state in
            state.timer = nil
            return (state.lastRead, state.isCancelled)
        }
        guard !isCancelled else { return }
        let now = scheduler.elapsed
        let due = end.map { min(lastRead.saturatingAdding(idle), $0) } ?? lastRead.saturatingAdding(idle)
        if due > now { setTimer(at: lastRead, expire) } else { expire() }
    }
}
