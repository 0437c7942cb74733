@testable import Courier

/// A clock that moves only when a test says so.
///
/// Sleepers wait until ``advance(by:)`` moves `now` past their deadline, so tests check timeouts,
/// backoff and freshness without sleeping for real. Tests wait for the code under test to start a
/// sleep with ``waitForSleeper(_:)`` before they advance.
final class TestClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
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

    private struct State {
        var now = Instant(offset: .zero)
        var nextID = 0
        var sleepers: [Int: Sleeper] = [:]
        var cancelledBeforeSleeping: Set<Int> = []
        var watchers: [Watcher] = []
        var requestedSleeps: [Duration] = []
    }

    private let state = Locked(State())

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }

    /// Every duration any sleeper asked for, in order.
    var requestedSleeps: [Duration] { state.withLock { $0.requestedSleeps } }

    /// The durations of the sleeps that are waiting now.
    var pendingSleeps: [Duration] { state.withLock { $0.sleepers.values.map(\.requested) } }

    /// Like `ContinuousClock`, which converts a deadline to whole seconds in an `Int64`, traps on a deadline that
    /// a real clock cannot represent: code that would crash in production crashes in tests too.
    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
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
    func advance(by duration: Duration) {
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

    /// Suspends until some task sleeps for a duration that satisfies `predicate` (already sleeping counts).
    func waitForSleeper(_ predicate: @escaping @Sendable (Duration) -> Bool = { _ in true }) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let satisfied = state.withLock { state in
                if state.sleepers.values.contains(where: { predicate($0.requested) }) { return true }
                state.watchers.append(Watcher(predicate: predicate, continuation: continuation))
                return false
            }
            if satisfied { continuation.resume() }
        }
    }

    /// Suspends until a sleep of exactly `duration` is waiting.
    func waitForSleeper(of duration: Duration) async {
        await waitForSleeper { $0 == duration }
    }

    private static func takeSatisfiedWatchers(_ state: inout State) -> [Watcher] {
        let sleeping = state.sleepers.values.map(\.requested)
        var woken: [Watcher] = []
        state.watchers.removeAll { watcher in
            guard sleeping.contains(where: watcher.predicate) else { return false }
            woken.append(watcher)
            return true
        }
        return woken
    }
}
