import Foundation

/// The state of an idle-timeout relay (see `ByteStream.idleTimeout`) as a plain value: whether the reader waits for a
/// chunk, with which deadline, and how the stream ended.
///
/// Every method is a short critical section run under the relay's lock. None resumes a reader, sets or cancels a timer
/// or cancels a task: each returns what must happen, and the relay does it after the lock is released.
///
/// ## The rule for a timeout that races a chunk
///
/// Each wait of the reader has a number, and the timer set for a wait carries it. The scheduler takes a due timer
/// off its heap and calls it outside its lock, so a chunk can reach the reader between the two: when ``expire(_:with:)``
/// then runs, the wait it was set for is over. An expiry applies only to the wait it was set for, and only while that
/// wait is still open: whichever of the chunk and the expiry takes the lock first ends the wait, and the other is
/// dropped. A chunk that arrived first wins and the stream goes on; an expiry that came first fails the reader and the
/// chunk is dropped with the transfer.
///
/// `Reader` is what resumes the reader and `Relay` what stops the task reading the source (a continuation and a
/// task in the relay; plain values in tests, which drive the machine directly).
struct IdleTimeoutStateMachine<Reader: Sendable, Relay: Sendable>: Sendable {
    /// The number of one wait of the reader.
    typealias Wait = UInt64

    enum State: Sendable {
        /// No reader waits.
        case idle
        /// The reader waits for the chunk of `wait`; `timer` is the scheduler entry of its deadline, once set.
        case waiting(Reader, wait: Wait, timer: UInt64?)
        /// The stream ended; every later read gets the same.
        case ended(Result<Void, any Error>)
    }

    /// The task that reads the source: started by the first read, outside the lock.
    private enum RelayTask: Sendable {
        case notStarted
        /// ``read(_:)`` asked for it to be started; ``relayStarted(_:)`` has not reported it yet.
        case starting
        case running(Relay)
    }

    private(set) var state = State.idle
    private var relay = RelayTask.notStarted
    private var waits: Wait = 0

    // MARK: Reading

    /// What to do for a read.
    enum ReadAction {
        /// Resume the reader now with `result`: the stream has ended, or another read is already waiting.
        case resume(Reader, with: Result<Data?, any Error>)
        /// The reader waits: set a timer for `wait` and report it with ``armed(_:timer:)``, start the relay task first
        /// when `startRelay` (and report it with ``relayStarted(_:)``), and ask the relay for one chunk.
        case wait(Wait, startRelay: Bool)
    }

    /// The reader asks for the next chunk.
    mutating func read(_ reader: Reader) -> ReadAction {
        switch state {
        case .ended(let end):
            return .resume(reader, with: end.map { nil })
        case .waiting:
            // One reader reads at a time (a `ByteStream` has one iterator); a read beside it is refused, not queued.
            return .resume(reader, with: .failure(APIError.streamAlreadyRead))
        case .idle:
            waits &+= 1
            state = .waiting(reader, wait: waits, timer: nil)
            guard case .notStarted = relay else { return .wait(waits, startRelay: false) }
            relay = .starting
            return .wait(waits, startRelay: true)
        }
    }

    /// The timer for `wait` was set. Returns the timer to cancel when that wait is already over.
    mutating func armed(_ wait: Wait, timer: UInt64) -> UInt64? {
        guard case .waiting(let reader, wait, .none) = state else { return timer }
        state = .waiting(reader, wait: wait, timer: timer)
        return nil
    }

    /// The relay task was started. Returns it to cancel when the stream ended meanwhile.
    mutating func relayStarted(_ task: Relay) -> Relay? {
        if case .ended = state { return task }
        relay = .running(task)
        return nil
    }

    // MARK: Ending a Wait

    /// What to do with what the source produced.
    enum DeliverAction {
        /// Resume `reader` with the result and cancel `timer` (when set).
        case resume(Reader, with: Result<Data?, any Error>, cancelTimer: UInt64?)
        /// Nothing: the stream already ended (stopped or timed out), so the result is dropped.
        case drop
    }

    /// The relay task read `result` from the source: a chunk, the end, or a failure.
    mutating func deliver(_ result: Result<Data?, any Error>) -> DeliverAction {
        guard case .waiting(let reader, _, let timer) = state else { return .drop }
        switch result {
        case .success(.some): state = .idle
        case .success(.none): state = .ended(.success(()))
        case .failure(let error): state = .ended(.failure(error))
        }
        return .resume(reader, with: result, cancelTimer: timer)
    }

    /// What to do to end the stream.
    enum StopAction {
        /// Nothing: the stream had already ended, or the expiry was for a wait that is over.
        case none
        /// Finish the relay's demands, resume `reader` (if one waits) with the error, cancel `timer` and `relay` (each
        /// when set).
        case stop(reader: Reader?, timer: UInt64?, relay: Relay?)
    }

    /// The timer of `wait` fired: the reader fails with `error` if that wait is still open (see the type's rule).
    mutating func expire(_ wait: Wait, with error: any Error) -> StopAction {
        guard case .waiting(_, wait, _) = state else { return .none }
        return stop(with: error)
    }

    /// Ends the stream with `error` (the reader left or was cancelled), unless it already ended.
    mutating func stop(with error: any Error) -> StopAction {
        let reader: Reader?
        let timer: UInt64?
        switch state {
        case .ended: return .none
        case .idle: (reader, timer) = (nil, nil)
        case .waiting(let waiting, _, let waitingTimer): (reader, timer) = (waiting, waitingTimer)
        }
        state = .ended(.failure(error))
        guard case .running(let task) = relay else { return .stop(reader: reader, timer: timer, relay: nil) }
        return .stop(reader: reader, timer: timer, relay: task)
    }
}
