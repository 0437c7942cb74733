/// Collapses concurrent calls for the same key into a single in-flight operation ("single-flight").
///
/// The first caller for a key starts a *flight*: the operation runs once, in its own unstructured task, and every
/// caller that arrives for that key while it runs waits for the same outcome. When the flight ends its entry is
/// removed, so results and errors are shared but never remembered: the next caller starts a new flight.
///
/// ```swift
/// let profiles = RequestCoalescer<User.ID, Profile>()
///
/// func profile(for id: User.ID) async throws -> Profile {
///     let result = try await profiles.run(id) {
///         try await api.fetchProfile(id)  // runs once, however many callers ask for `id` meanwhile
///     }
///     return result.value
/// }
/// ```
///
/// - Important: Concurrency contract.
///   - The operation runs off this actor, in a task owned by the flight, never in any caller's task. It inherits
///     the priority and task-local values of the caller that started the flight, but not its cancellation.
///   - A caller that is cancelled leaves at once with `CancellationError`, even though the flight keeps running
///     for the others. The flight's task is cancelled only when its last waiter leaves and the policy is
///     ``AbandonmentPolicy/cancel``; with ``AbandonmentPolicy/finish`` it runs on and can still be joined.
///   - A caller whose task is already cancelled gets `CancellationError` without starting a flight.
///   - Every caller is resumed exactly once; errors are rethrown as-is, to every waiter of the flight.
public actor RequestCoalescer<Key: Hashable & Sendable, Value: Sendable> {
    private typealias Waiter = CheckedContinuation<Value, any Error>

    /// One in-flight operation and the callers suspended on it.
    ///
    /// Waiters are keyed by a unique id rather than kept in an array so that joining and leaving are O(1); a
    /// cancelled caller only knows its id, and scanning for it would make a burst of n cancellations O(n²).
    private struct Flight {
        let id: UInt64
        let task: Task<Void, Never>
        var waiters: [UInt64: Waiter]
    }

    private let policy: AbandonmentPolicy
    private var flights: [Key: Flight] = [:]
    /// Source of both flight and waiter ids; one counter keeps every id unique, which `leave` relies on.
    private var lastID: UInt64 = 0
    /// Kept alongside `flights` so `waiterCount` is O(1) instead of a sum over every flight.
    private var waiting = 0

    /// Number of times a flight task reported its outcome, including stale reports from abandoned flights.
    ///
    /// Not public API: tests use it to know that a late completion has been processed.
    private(set) var reportedOutcomes = 0

    /// Creates an empty coalescer.
    ///
    /// ```swift
    /// let thumbnails = RequestCoalescer<URL, Data>(whenAbandoned: .finish)
    /// ```
    ///
    /// - Parameter policy: What to do with a flight once all of its waiters have cancelled; defaults to
    ///   ``AbandonmentPolicy/cancel``.
    /// - Important: A coalescer is an actor: share one instance between all callers that should be coalesced.
    public init(whenAbandoned policy: AbandonmentPolicy = .cancel) {
        self.policy = policy
    }

    /// Number of flights currently in the table (for diagnostics and tests).
    ///
    /// ```swift
    /// assert(await coalescer.flightCount == 0, "a flight leaked")
    /// ```
    ///
    /// - Important: The value is a snapshot taken on the actor; it may be stale as soon as it is returned. A flight
    ///   abandoned under ``AbandonmentPolicy/cancel`` is no longer counted even if its task is still winding down.
    public var flightCount: Int { flights.count }

    /// Total number of callers currently waiting, across all flights (for diagnostics and tests).
    ///
    /// ```swift
    /// while await coalescer.waiterCount < expected { await Task.yield() }
    /// ```
    ///
    /// - Important: The value is a snapshot taken on the actor. A caller is counted from the moment it is registered
    ///   on a flight until it is resumed, so a cancelled caller stops counting as soon as it has left.
    public var waiterCount: Int { waiting }

    /// Runs `operation` for `key`, or joins the flight already running for `key`, and returns its shared outcome.
    ///
    /// ```swift
    /// let result = try await coalescer.run(request.url) { try await transport.send(request) }
    /// print(result.joined ? "joined flight \(result.flightID)" : "led flight \(result.flightID)")
    /// ```
    ///
    /// - Parameters:
    ///   - key: Identifies which calls are interchangeable.
    ///   - operation: The work to run if no flight exists for `key`. It is ignored when the caller joins.
    /// - Returns: The flight's value, whether this caller joined, and the flight's id.
    /// - Throws: The flight's error, as-is, if the operation failed; `CancellationError` if this caller's task is
    ///   cancelled before the flight ends (or was cancelled already).
    /// - Important: The operation runs in the flight's own task, not the caller's: cancelling the caller only
    ///   withdraws the caller. The flight task is cancelled when its last waiter withdraws (policy
    ///   ``AbandonmentPolicy/cancel``). Errors are shared with the current waiters but never cached.
    public func run(
        _ key: Key,
        operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Coalesced<Value> {
        try Task.checkCancellation()
        lastID &+= 1
        let waiterID = lastID
        var joined = false
        var flightID: UInt64 = 0
        // Both closures below are isolated to this actor via their `isolation: #isolation` parameter, so they run
        // synchronously here without hopping. Correctness does not depend on that, though: choosing or creating
        // the flight and registering the waiter happen together inside the continuation body, and that body
        // re-checks cancellation, so an `onCancel` that fired before registration cannot leave a waiter stranded.
        let value = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: Waiter) in
                guard !Task.isCancelled else {
                    waiter.resume(throwing: CancellationError())
                    return
                }
                (joined, flightID) = register(waiter, id: waiterID, for: key, operation: operation)
            }
        } onCancel: {
            // Runs synchronously in whichever thread cancels us, outside the actor, so it may not touch
            // `flights`; hop onto the actor instead. `leave` is a no-op if the waiter was resumed meanwhile.
            Task { await self.leave(key, waiterID: waiterID) }
        }
        return Coalesced(value: value, joined: joined, flightID: flightID)
    }

    /// Adds `waiter` to the flight for `key`, starting one if needed; returns (joined, flight id).
    private func register(
        _ waiter: Waiter,
        id waiterID: UInt64,
        for key: Key,
        operation: @escaping @Sendable () async throws -> Value
    ) -> (joined: Bool, flightID: UInt64) {
        waiting += 1
        // Mutate through the optional chain so the dictionary is modified in place; copying the `Flight` out and
        // writing it back would copy its waiter table and make every join O(n).
        if let flightID = flights[key]?.id {
            flights[key]?.waiters[waiterID] = waiter
            return (true, flightID)
        }
        lastID &+= 1
        let flightID = lastID
        let task = Self.launch(flightID, for: key, on: self, operation: operation)
        // The task cannot report before this line: `finish` needs the actor, which we hold until we return.
        flights[key] = Flight(id: flightID, task: task, waiters: [waiterID: waiter])
        return (false, flightID)
    }

    /// Starts the flight's task from a nonisolated context so that neither the task nor the operation starts on
    /// this actor's executor: the actor only does bookkeeping, never the caller's work.
    private static func launch(
        _ flightID: UInt64,
        for key: Key,
        on coalescer: RequestCoalescer,
        operation: @escaping @Sendable () async throws -> Value
    ) -> Task<Void, Never> {
        Task {
            let outcome: Result<Value, any Error>
            do {
                outcome = .success(try await operation())
            } catch {
                outcome = .failure(error)
            }
            await coalescer.finish(key, flightID: flightID, outcome: outcome)
        }
    }

    /// Delivers a flight's outcome to its remaining waiters and forgets the flight.
    private func finish(_ key: Key, flightID: UInt64, outcome: Result<Value, any Error>) {
        reportedOutcomes += 1
        // An abandoned flight was removed when its last waiter left, and the key may now belong to a newer flight:
        // only the flight that is still in the table may remove the entry or resolve its waiters.
        guard flights[key]?.id == flightID, let flight = flights.removeValue(forKey: key) else { return }
        waiting -= flight.waiters.count
        for waiter in flight.waiters.values {
            waiter.resume(with: outcome)
        }
    }

    /// Withdraws one cancelled waiter and applies the abandonment policy if it was the last one.
    private func leave(_ key: Key, waiterID: UInt64) {
        // Waiter ids are unique across flights, so a miss means the waiter was already resumed (its flight ended,
        // or it was never registered because it saw its cancellation first): nothing to do, never resume twice.
        guard let waiter = flights[key]?.waiters.removeValue(forKey: waiterID) else { return }
        waiting -= 1
        waiter.resume(throwing: CancellationError())
        guard policy == .cancel, flights[key]?.waiters.isEmpty == true else { return }
        // Remove before cancelling so a caller arriving next starts a fresh flight instead of joining a dying one.
        flights.removeValue(forKey: key)?.task.cancel()
    }
}
