import Foundation

/// The life of one ``URLSessionStreamingExchange`` as a plain value: who waits for the head, where the session and
/// its task are, whether the exchange was cancelled, and the body between URLSession and the reader
/// (``StreamingBuffer``).
///
/// Every method is a short critical section run under the exchange's lock. None resumes a waiter or touches the
/// session: each returns what must happen, and the exchange does it after the lock is released (the session and task
/// from its own queue, since each of their methods waits for the session's work queue).
///
/// ## The rules for the races
///
/// - Cancelling is final and wins over anything that has not taken the lock yet: a head waiter still waiting gets
///   `CancellationError`, the body ends for the reader (what was buffered is dropped), and a session made after it is
///   invalidated without its task being resumed.
/// - The head waiter is resumed once: by the head, the completion, or the cancel, whichever takes the lock first.
/// - Every pause and resume of the task is decided under the lock and enqueued on the exchange's serial queue in that
///   order (see ``URLSessionStreamingExchange``), so the task sees them in the order decided.
///
/// `HeadWaiter`, `Session` and `Task` are a continuation, a `URLSession` and its task in the exchange; plain values in
/// tests, which drive the machine directly.
struct URLSessionStreamingExchangeStateMachine<HeadWaiter: Sendable, Session: Sendable, Task: Sendable>: Sendable {
    /// Where the head is.
    enum Head: Sendable {
        /// Nobody asked for it yet.
        case notRequested
        case waiting(HeadWaiter)
        /// It arrived and was handed to the waiter (or arrived before anyone waited).
        case arrived
        /// The waiter was told something else: the cancel, or the completion.
        case told
    }

    /// Where the session and its task are.
    enum Transfer: Sendable {
        case notMade
        case running(Session, Task)
        /// URLSession reported the task complete; the session is kept to be invalidated.
        case completed(Session)
    }

    private(set) var head = Head.notRequested
    private(set) var transfer = Transfer.notMade
    /// Whether the exchange was cancelled (by the caller before the head, or by the reader): final.
    private(set) var isCancelled = false
    /// Whether the head arrived (for the translation of a failure that follows it).
    private(set) var headArrived = false
    private(set) var body: StreamingBuffer

    init(body: StreamingBuffer) {
        self.body = body
    }

    // MARK: Starting

    /// The caller waits for the head. Returns `false` when the exchange was cancelled: resume it with
    /// `CancellationError` now and make no session.
    mutating func waitForHead(_ waiter: HeadWaiter) -> Bool {
        guard !isCancelled else { return false }
        head = .waiting(waiter)
        return true
    }

    /// What to do with the session just made.
    enum SessionMadeAction {
        case resume(Task)
        /// The exchange was cancelled meanwhile: invalidate the session; the task never starts.
        case invalidate(Session)
    }

    /// The session and its task were made.
    mutating func sessionMade(_ session: Session, task: Task) -> SessionMadeAction {
        transfer = .running(session, task)
        return isCancelled ? .invalidate(session) : .resume(task)
    }

    // MARK: Cancelling

    /// What to do to cancel.
    struct CancelAction {
        /// The head waiter to resume with `CancellationError`.
        var head: HeadWaiter?
        /// The reader to resume with `CancellationError`.
        var reader: CheckedContinuation<Data?, any Error>?
        /// The task to cancel, when it runs.
        var cancelTask: Task?
        /// The session to invalidate, when its task is no longer running.
        var invalidate: Session?
    }

    /// Stops the exchange for good.
    mutating func cancel() -> CancelAction {
        isCancelled = true
        var action = CancelAction()
        if case .waiting(let waiter) = head {
            head = .told
            action.head = waiter
        }
        if case .ended(let reader) = body.finish(.failure(CancellationError()), discarding: true) {
            action.reader = reader
        }
        switch transfer {
        case .notMade: break
        case .running(_, let task): action.cancelTask = task
        case .completed(let session): action.invalidate = session
        }
        return action
    }

    // MARK: The Body

    /// What the reader gets, and the task to resume when the reader drained a paused transfer.
    mutating func pull(_ reader: CheckedContinuation<Data?, any Error>) -> (StreamingBuffer.Pull, resume: Task?) {
        let pulled = body.pull(reader)
        guard case .chunk(_, resumeProducer: true) = pulled, case .running(_, let task) = transfer else {
            return (pulled, nil)
        }
        return (pulled, task)
    }

    /// URLSession delivered `chunk`.
    mutating func push(_ chunk: Data) -> StreamingBuffer.Push {
        body.push(chunk)
    }

    /// The body ends with `result`; returns the reader to resume, if one waits.
    mutating func endBody(_ result: Result<Void, any Error>) -> CheckedContinuation<Data?, any Error>? {
        guard case .ended(let reader?) = body.finish(result) else { return nil }
        return reader
    }

    // MARK: The Head and the Completion

    /// The head arrived; returns the waiter to hand it to.
    mutating func headDidArrive() -> HeadWaiter? {
        headArrived = true
        guard case .waiting(let waiter) = head else {
            if case .notRequested = head { head = .arrived }
            return nil
        }
        head = .arrived
        return waiter
    }

    /// URLSession reported the task complete. Returns the head waiter still waiting, to give it the response or the
    /// failure.
    mutating func complete() -> HeadWaiter? {
        if case .running(let session, _) = transfer { transfer = .completed(session) }
        guard case .waiting(let waiter) = head else { return nil }
        head = .told
        return waiter
    }
}
