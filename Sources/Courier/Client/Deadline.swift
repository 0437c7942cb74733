/// Runs an operation against a deadline kept by the client's ``DeadlineScheduler``.
///
/// The operation runs in its own task so that the caller gets its answer the moment the deadline
/// passes or the caller is cancelled, even from a transport that ignores cancellation: the operation is
/// cancelled and left to wind down on its own, and its late result is dropped. It is cancelled *before* the
/// caller is resumed, so a transport that drops a cancelled request synchronously (``URLSessionTransport``
/// queueing it) never sends it after its caller left.
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
        startTimer {
            work.cancel()
            race.finish(.failure(timeoutError))
        }
        defer {
            work.cancel()
            stopTimer()
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                race.wait(with: continuation)
            }
        } onCancel: {
            work.cancel()
            race.finish(.failure(CancellationError()))
        }
    }
}

/// The first result wins; the continuation is resumed exactly once, whichever arrives first.
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

    func finish(_ result: Result<Value, any Error>) {
        let waiter: CheckedContinuation<Value, any Error>? = state.withLock { state in
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
        waiter?.resume(with: result)
    }
}
