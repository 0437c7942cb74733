/// Runs an operation against a deadline kept by the client's ``DeadlineScheduler``.
///
/// The operation runs in its own task so that the caller gets its answer the moment the deadline
/// passes or the caller is cancelled, even from a transport that ignores cancellation: the operation is
/// cancelled and left to wind down on its own, and its late result is dropped. It is cancelled *before* the
/// caller is resumed, so a transport that drops a cancelled request synchronously (``URLSessionTransport``
/// queueing it) never sends it after its caller left.
///
/// The outcome is recorded *before* the operation is cancelled: the first of {finished, timed out, cancelled by the
/// caller} wins, atomically. Cancelling first let the operation's own `CancellationError` (what a transport throws
/// when it is stopped) arrive before the timeout, and a caller nobody cancelled was told it was cancelled: the
/// attempt was neither counted nor retried as a timeout, and a stream ended instead of reconnecting.
enum Deadline {
    static func run<Value: Sendable>(
        _ deadline: TransportDeadline,
        operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        var registration: TransportDeadline.Registration?
        return try await run(
            timeoutError: deadline.timeoutError, startTimer: { registration = deadline.onExpiry($0) },
            stopTimer: { registration?.cancel() }, operation: operation)
    }

    /// ``run(_:operation:)`` against a ``SendingDeadline``, which moves while the transport reads the request's body.
    static func run<Value: Sendable>(
        _ deadline: SendingDeadline, timeoutError: APIError,
        operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await run(
            timeoutError: timeoutError, startTimer: { deadline.start($0) }, stopTimer: { deadline.cancel() },
            operation: operation)
    }

    /// The race itself: `startTimer` is handed what to do when the deadline passes, and `stopTimer` ends the timer
    /// once the race is over, whoever won.
    private static func run<Value: Sendable>(
        timeoutError: APIError,
        startTimer: (_ expire: @escaping @Sendable () -> Void) -> Void,
        stopTimer: () -> Void,
        operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let race = Race<Value>()
        let work = Task {
            do {
                race.finish(.success(try await operation()))
            } catch {
                race.finish(.failure(error))
            }
        }
        startTimer { race.stop(work, with: .failure(timeoutError)) }
        defer {
            work.cancel()
            stopTimer()
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                race.wait(with: continuation)
            }
        } onCancel: {
            race.stop(work, with: .failure(CancellationError()))
        }
    }
}

/// The first result wins; the continuation is resumed exactly once, whichever arrives first. A state machine: `idle`
/// until the caller waits or a result arrives, then `done` once the caller has its result.
private final class Race<Value: Sendable>: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<Value, any Error>)
        case finishedEarly(Result<Value, any Error>)
        case done
    }

    private let state = Locked(State.idle)

    func wait(with continuation: CheckedContinuation<Value, any Error>) {
        let early: Result<Value, any Error>? = state.withLock { state in
            switch state {
            case .idle:
                state = .waiting(continuation)
                return nil
            case .finishedEarly(let result):
                state = .done
                return result
            case .waiting, .done:
                preconditionFailure("a race is awaited once")
            }
        }
        if let early { continuation.resume(with: early) }
    }

    /// The operation ended: its result wins unless the race was already decided.
    func finish(_ result: Result<Value, any Error>) {
        settle(result)?.resume(with: result)
    }

    /// The deadline passed or the caller left: `result` is recorded first, if the race is still open, then the work
    /// is cancelled, then the caller is resumed. Whatever the cancelled work throws after that loses.
    func stop(_ work: Task<Void, Never>, with result: Result<Value, any Error>) {
        let waiter = settle(result)
        work.cancel()
        waiter?.resume(with: result)
    }

    /// Records `result` if nothing won yet; returns the waiting caller to resume with it, if there is one.
    private func settle(_ result: Result<Value, any Error>) -> CheckedContinuation<Value, any Error>? {
        state.withLock { state in
            switch state {
            case .idle:
                state = .finishedEarly(result)
                return nil
            case .waiting(let continuation):
                state = .done
                return continuation
            case .finishedEarly, .done:
                return nil
            }
        }
    }
}
