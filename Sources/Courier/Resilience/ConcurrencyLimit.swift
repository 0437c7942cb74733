/// Bounds the calls in flight to an origin, and sheds what would wait too long, instead of letting a slow
/// upstream build an unbounded queue of callers.
///
/// A call takes a place (``acquire(within:)``) before it is sent and gives it back when it ends
/// (``release(dropped:)``). When every place is taken, a caller waits in a first-in first-out queue of at most
/// ``Configuration/queueCapacity`` callers; past that it fails at once with ``APIError/shed(origin:reason:)``
/// (``ShedReason/queueFull(capacity:)``), and a caller whose wait reaches its deadline leaves the queue with
/// ``ShedReason/waitedPastDeadline(_:)``. Failing fast is the point: a caller that gets an answer in a millisecond can
/// serve a fallback, while one that waits out a 60-second timeout holds its own caller, and so on upstream.
///
/// The limit is fixed, or adaptive in the style of Netflix's concurrency-limits:
/// ``Limit/aimd(initial:minimum:maximum:backoff:)`` cuts it by a ratio on every drop (a timeout, a `503`, a `429`)
/// and raises it by one on a success while at least half of it is in use, so it settles at what the upstream can
/// serve.
///
/// - Important: Every place acquired must be released exactly once. A waiter that is cancelled leaves the queue at
///   once with `CancellationError`; the queue's order is the order of ``acquire(within:)`` calls.
public final class ConcurrencyLimit: Sendable {
    /// How many calls may be in flight.
    public enum Limit: Sendable, Hashable {
        /// Always this many (at least 1).
        case fixed(Int)
        /// Additive increase, multiplicative decrease between `minimum` and `maximum`, starting at `initial`;
        /// `backoff` is the factor applied on a drop (0.9 in Netflix's library).
        case aimd(initial: Int, minimum: Int, maximum: Int, backoff: Double)
    }

    /// The limit and its queue.
    public struct Configuration: Sendable, Hashable {
        /// How many calls may be in flight.
        public var limit: Limit
        /// How many callers may wait for a place; past it a caller is shed at once. 0 sheds every caller that finds
        /// no place.
        public var queueCapacity: Int

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - limit: How many calls may be in flight.
        ///   - queueCapacity: How many callers may wait; at least 0.
        public init(limit: Limit, queueCapacity: Int = 0) {
            switch limit {
            case .fixed(let count):
                self.limit = .fixed(max(1, count))
            case .aimd(let initial, let minimum, let maximum, let backoff):
                let low = max(1, minimum)
                let high = max(low, maximum)
                let factor = backoff.isFinite ? min(1, max(0.1, backoff)) : 0.9
                self.limit = .aimd(initial: min(high, max(low, initial)), minimum: low, maximum: high, backoff: factor)
            }
            self.queueCapacity = max(0, queueCapacity)
        }

        /// A fixed limit of `count` calls with a queue of `queue` callers.
        ///
        /// - Parameters:
        ///   - count: How many calls may be in flight.
        ///   - queue: How many callers may wait.
        public static func fixed(_ count: Int, queue: Int = 0) -> Configuration {
            Configuration(limit: .fixed(count), queueCapacity: queue)
        }

        /// Netflix's AIMD defaults (start at 20, between 1 and 200, × 0.9 on a drop) with a queue of `queue`.
        ///
        /// - Parameter queue: How many callers may wait.
        public static func adaptive(queue: Int = 50) -> Configuration {
            Configuration(limit: .aimd(initial: 20, minimum: 1, maximum: 200, backoff: 0.9), queueCapacity: queue)
        }
    }

    /// The limit's configuration.
    public let configuration: Configuration
    private let clock: any Clock<Duration>
    private let state: Locked<ConcurrencyLimitState>
    private let ids = Locked<UInt64>(0)

    /// Creates a limit with nothing in flight.
    ///
    /// - Parameters:
    ///   - configuration: The limit and its queue.
    ///   - clock: The clock a waiter's deadline is measured on; tests pass a manual clock.
    public init(_ configuration: Configuration, clock: any Clock<Duration> = ContinuousClock()) {
        self.configuration = configuration
        self.clock = clock
        self.state = Locked(ConcurrencyLimitState(configuration))
    }

    /// Calls in flight now.
    public var inFlight: Int { state.withLock { $0.inFlight } }
    /// Callers waiting now.
    public var waiting: Int { state.withLock { $0.waiters.count } }
    /// The limit now (it moves when adaptive).
    public var limit: Int { state.withLock { $0.currentLimit } }

    /// Takes a place, waiting in line for at most `timeout` when none is free.
    ///
    /// - Parameter timeout: The longest the caller may wait: what is left of its deadline.
    /// - Throws: ``ShedReason`` when the queue is full or the wait reached `timeout`; `CancellationError` when the
    ///   caller's task is cancelled while it waits.
    public func acquire(within timeout: Duration) async throws {
        switch state.withLock({ $0.acquire() }) {
        case .granted: return
        case .shed(let reason): throw reason
        case .wait: break
        }
        guard timeout > .zero else { throw ShedReason.waitedPastDeadline(timeout) }
        let id = ids.withLock { id in
            id += 1
            return id
        }
        // The deadline: a sleep on the injected clock that makes the waiter leave, cancelled once it has a place.
        let expiry = Task { [clock, state] in
            guard (try? await clock.sleep(for: timeout)) != nil else { return }
            state.withLock { $0.leave(id, .expired(timeout)) }?.continuation.resume(
                throwing: ShedReason.waitedPastDeadline(timeout))
        }
        defer {
            expiry.cancel()
            state.withLock { $0.finish(id) }
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                switch state.withLock({ $0.enqueue(.init(id: id, continuation: continuation)) }) {
                case .queued: break
                case .granted: continuation.resume()
                case .left(.cancelled): continuation.resume(throwing: CancellationError())
                case .left(.expired(let timeout)): continuation.resume(throwing: ShedReason.waitedPastDeadline(timeout))
                }
            }
        } onCancel: {
            state.withLock { $0.leave(id, .cancelled) }?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Gives a place back, and hands it to the longest waiting caller.
    ///
    /// - Parameter dropped: Whether the call ended in a way that says the upstream is overloaded (a timeout, a
    ///   `503`, a `429`): an adaptive limit comes down.
    public func release(dropped: Bool = false) {
        let granted = state.withLock { $0.release(dropped: dropped) }
        for waiter in granted { waiter.continuation.resume() }
    }
}
