/// A clock whose time moves only when a test calls ``advance(by:)``.
///
/// Give it to ``Courier/APIClient/Configuration/clock`` (and to a ``Courier/TokenRefresher``) and a test checks
/// deadlines, retry delays and `Retry-After` without sleeping: it waits until the client sleeps, with
/// ``waitForSleeper(of:)``, then moves time on.
///
/// ```swift
/// let call = Task { try await client.send(APIRequest<Void>.get("/health")) }
/// await clock.waitForSleeper(of: .seconds(2))  // the client waits for Retry-After
/// clock.advance(by: .seconds(2))
/// let response = try await call.value
/// ```
///
/// - Important: A sleep cancelled at any moment (before it started waiting, or while it waits) ends exactly once,
///   with `CancellationError`: the client cancels a deadline's sleep after every attempt.
public final class ManualClock: Clock, Sendable {
    /// A point in this clock's time: how far it is from the clock's start.
    public struct Instant: InstantProtocol {
        /// The time since the clock started.
        public var offset: Duration

        /// Creates an instant at `offset` from the clock's start.
        ///
        /// - Parameter offset: The time since the clock started.
        public init(offset: Duration) { self.offset = offset }

        /// The instant `duration` after this one.
        ///
        /// - Parameter duration: How far to move.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The time from this instant to `other`.
        ///
        /// - Parameter other: The later (or earlier) instant.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        /// Whether `lhs` comes before `rhs`.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        let deadline: Instant
        let requested: Duration
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Watcher {
        let predicate: @Sendable (Duration) -> Bool
        let continuation: CheckedContinuation<Void, Never>
    }

    /// One call of ``waitForSleeper(_:)``, from before it suspends until it is resumed: its entry is removed by
    /// whichever of a sleeper and a cancellation resumes it, so none is left behind.
    private enum Watch {
        case starting
        case cancelledBeforeWaiting
        case waiting(Watcher)
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID = 0
        var sleepers: [Int: Sleeper] = [:]
        var cancelledBeforeSleeping: Set<Int> = []
        var watches: [Int: Watch] = [:]
        var requestedSleeps: [Duration] = []
    }

    private let state = LockedState(State())

    /// A clock at its start, `.zero`, with nobody sleeping.
    public init() {}

    /// The current instant; it moves only with ``advance(by:)``.
    public var now: Instant { state.withLock { $0.now } }
    /// Zero: this clock has no granularity of its own.
    public var minimumResolution: Duration { .zero }

    /// Every duration any sleeper asked for, in order.
    public var requestedSleeps: [Duration] { state.withLock { $0.requestedSleeps } }

    /// The durations of the sleeps that are waiting now, as each sleeper asked for them.
    public var pendingSleeps: [Duration] { state.withLock { $0.sleepers.values.map(\.requested) } }

    /// Suspends until ``advance(by:)`` moves time to `deadline` or past it.
    ///
    /// Like `ContinuousClock`, which converts a deadline to whole seconds in an `Int64`, traps on a deadline that
    /// a real clock cannot represent: code that would crash in production crashes in tests too.
    ///
    /// - Parameters:
    ///   - deadline: When to wake up.
    ///   - tolerance: Ignored: this clock wakes sleepers exactly when ``advance(by:)`` passes their deadline.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        _ = deadline.offset.components
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (outcome, woken) = state.withLock { state -> (Result<Void, any Error>?, [Watcher]) in
                    if state.cancelledBeforeSleeping.remove(id) != nil { return (.failure(CancellationError()), []) }
                    if deadline <= state.now { return (.success(()), []) }
                    let requested = state.now.duration(to: deadline)
                    state.sleepers[id] = Sleeper(deadline: deadline, requested: requested, continuation: continuation)
                    state.requestedSleeps.append(requested)
                    return (nil, Self.takeSatisfiedWatchers(&state))
                }
                if let outcome { continuation.resume(with: outcome) }
                for watcher in woken { watcher.continuation.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { state in
                guard let sleeper = state.sleepers.removeValue(forKey: id) else {
                    state.cancelledBeforeSleeping.insert(id)
                    return Sleeper?.none
                }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has passed, earliest first.
    ///
    /// - Parameter duration: How far to move time; sleepers due by then wake up.
    public func advance(by duration: Duration) {
        let due = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }.sorted {
                $0.value.deadline < $1.value.deadline
            }
            for (id, _) in due { state.sleepers[id] = nil }
            return due.map(\.value)
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Suspends until some task sleeps for a duration that satisfies `predicate` (already sleeping counts), or until
    /// the waiting task is cancelled.
    ///
    /// Cancellation ends the wait at once (a test's time limit, or a helper task that moves time and is cancelled when
    /// the test is done, is not left hanging) and forgets the waiter. Check `Task.isCancelled` after it returns when
    /// the difference matters.
    ///
    /// - Parameter predicate: Which requested durations count; any by default.
    public func waitForSleeper(_ predicate: @escaping @Sendable (Duration) -> Bool = { _ in true }) async {
        let id = state.withLock { state in
            state.nextID += 1
            state.watches[state.nextID] = .starting
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let isDone = state.withLock { state in
                    if case .cancelledBeforeWaiting? = state.watches[id] {
                        state.watches[id] = nil
                        return true
                    }
                    if state.sleepers.values.contains(where: { predicate($0.requested) }) {
                        state.watches[id] = nil
                        return true
                    }
                    state.watches[id] = .waiting(Watcher(predicate: predicate, continuation: continuation))
                    return false
                }
                if isDone { continuation.resume() }
            }
        } onCancel: {
            let watcher = state.withLock { state -> Watcher? in
                switch state.watches[id] {
                case .starting?:
                    state.watches[id] = .cancelledBeforeWaiting
                    return nil
                case .waiting(let watcher)?:
                    state.watches[id] = nil
                    return watcher
                case .cancelledBeforeWaiting?, nil:
                    return nil  // already resumed by a sleeper
                }
            }
            watcher?.continuation.resume()
        }
    }

    /// Suspends until a sleep of exactly `duration` is waiting.
    ///
    /// - Parameter duration: The duration a sleeper must ask for.
    public func waitForSleeper(of duration: Duration) async {
        await waitForSleeper { $0 == duration }
    }

    private static func takeSatisfiedWatchers(_ state: inout State) -> [Watcher] {
        let sleeping = state.sleepers.values.map(\.requested)
        var woken: [Watcher] = []
        for (id, watch) in state.watches {
            guard case .waiting(let watcher) = watch, sleeping.contains(where: watcher.predicate) else { continue }
            state.watches[id] = nil
            woken.append(watcher)
        }
        return woken
    }
}
