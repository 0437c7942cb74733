/// The life of one ``URLSessionExchange`` as a plain value: where its caller is (not yet waiting, waiting, left, told)
/// and where its URLSession task is (not made, running, complete).
///
/// Every method is a short critical section run under the exchange's lock. None resumes the caller, starts or cancels
/// the task: each returns what must happen, and the exchange does it after the lock is released (on the session's
/// queue for the task, so that no callback and no cancellation handler ever waits).
///
/// ## The rules for the races
///
/// - The caller is told exactly once: by whichever of its leaving (cancellation, deadline), an early stop (a body
///   past the limit, an undecodable coding) and the task's completion takes the lock first; the others find the
///   caller told and do nothing to it.
/// - A caller that left is never sent for: a task is made only while the caller has not left, and a task made while
///   it was leaving is cancelled without being resumed.
/// - `finished` (the connection slot given back) is reported once, when URLSession reports the task complete, or at
///   once when the caller left before any task was made.
///
/// `Continuation` and `Task` are the caller's continuation and the `URLSessionTask` in the exchange; plain values in
/// tests, which drive the machine directly.
struct URLSessionExchangeStateMachine<Continuation: Sendable, Task: Sendable>: Sendable {
    /// Where the caller is.
    enum Caller: Sendable {
        /// It has not handed over its continuation yet.
        case notWaiting
        /// It waits for the outcome.
        case waiting(Continuation)
        /// It left with this error (cancelled, or its deadline passed), and was told so.
        case left(any Error)
        /// It was given the outcome, or an early stop.
        case told
    }

    /// Where the URLSession task is.
    enum Transfer: Sendable {
        case notMade
        case running(Task)
        /// URLSession reported it complete; the task is let go (it holds the exchange as its delegate).
        case completed
    }

    private(set) var caller = Caller.notWaiting
    private(set) var transfer = Transfer.notMade

    /// Whether the caller left (cancelled, or its deadline passed).
    var hasLeft: Bool {
        guard case .left = caller else { return false }
        return true
    }

    /// Whether the caller left by cancelling.
    var isCancelledByCaller: Bool {
        guard case .left(let error) = caller else { return false }
        return error is CancellationError
    }

    // MARK: Starting

    /// The caller hands over its continuation. Returns the error to resume it with at once when it already left.
    mutating func report(to continuation: Continuation) -> (any Error)? {
        switch caller {
        case .left(let error):
            return error
        case .notWaiting, .waiting, .told:
            caller = .waiting(continuation)
            return nil
        }
    }

    /// What to do when the exchange is about to make its task.
    enum StartAction: Equatable {
        /// Make the task, then report it with ``taskMade(_:)``.
        case makeTask
        /// Make none: the caller left; report `finished` now (no task will ever complete).
        case finish
    }

    /// The exchange is about to make its task.
    func start() -> StartAction {
        hasLeft ? .finish : .makeTask
    }

    /// What to do with the task just made.
    enum TaskMadeAction {
        case resume(Task)
        /// The caller left while it was made: cancel it without resuming it.
        case cancel(Task)
    }

    /// The task was made (and its delegate set).
    mutating func taskMade(_ task: Task) -> TaskMadeAction {
        transfer = .running(task)
        return hasLeft ? .cancel(task) : .resume(task)
    }

    // MARK: Ending

    /// What to do when the caller leaves.
    struct LeaveAction {
        /// The caller to resume with the error, if it was waiting.
        var resume: Continuation?
        /// The task to cancel (from the session's queue), if it runs.
        var cancel: Task?
    }

    /// The caller leaves with `error`: it is told now (unless it was told already), and the task is cancelled.
    mutating func leave(with error: any Error) -> LeaveAction {
        var action = LeaveAction()
        if case .running(let task) = transfer { action.cancel = task }
        switch caller {
        case .notWaiting:
            caller = .left(error)
        case .waiting(let continuation):
            caller = .left(error)
            action.resume = continuation
        case .left, .told:
            break
        }
        return action
    }

    /// The exchange stops the task itself (a body past the limit, an undecodable coding). Returns the caller to tell
    /// now, if it waits, and the task to cancel, if it runs.
    mutating func stopEarly() -> LeaveAction {
        var action = LeaveAction()
        if case .running(let task) = transfer { action.cancel = task }
        if case .waiting(let continuation) = caller {
            caller = .told
            action.resume = continuation
        }
        return action
    }

    /// URLSession reported the task complete. Returns the caller to give the outcome to, if it still waits; the
    /// exchange reports `finished` in every case.
    mutating func complete() -> Continuation? {
        transfer = .completed
        guard case .waiting(let continuation) = caller else { return nil }
        caller = .told
        return continuation
    }
}
