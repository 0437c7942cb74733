import Synchronization

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
/// ## Why `run` does not run on the actor
///
/// The table of flights is a plain value (`FlightTable`) behind a lock, and ``run(_:operation:)`` is
/// `nonisolated`. A continuation created on an actor resumes on that actor, so with an actor-isolated `run`
/// every one of N joiners hops back onto the actor, one after another, when the flight lands. Measured on a
/// 2-core Linux machine with 10,000 joiners of one 20 ms flight: 100–140 ms for the actor-isolated version,
/// about 60 ms with the lock, where the floor (10,000 tasks that only sleep 20 ms) is about 40 ms.
/// The lock also lets a cancelled caller leave synchronously, inside its cancellation handler.
/// The diagnostics (``flightCount``, ``waiterCount``) stay actor-isolated reads of the same table.
///
/// - Important: Concurrency contract.
///   - The operation runs in a task owned by the flight, never in any caller's task and never on this actor. It
///     inherits the priority and task-local values of the caller that started the flight, but not its cancellation.
///     The task starts on that caller's thread (`Task.immediate`; on Apple systems before macOS 26 and its peers, on
///     the global executor) and stays there until the operation first suspends, so starting a flight costs no
///     thread hop.
///   - A caller that is cancelled leaves at once with `CancellationError`, even though the flight keeps running
///     for the others. The flight's task is cancelled only when its last waiter leaves and the policy is
///     ``AbandonmentPolicy/cancel``; with ``AbandonmentPolicy/finish`` it runs on and can still be joined.
///   - A caller whose task is already cancelled gets `CancellationError` without starting a flight.
///   - Every caller is resumed exactly once; errors are rethrown as-is, to every waiter of the flight.
public actor RequestCoalescer<Key: Hashable & Sendable, Value: Sendable> {
    private typealias Table = FlightTable<Key, Value>

    private nonisolated let policy: AbandonmentPolicy
    private nonisolated let table: Locked<Table>
    /// The table's count of flights, read without its lock (``FlightCensus``).
    nonisolated let census: FlightCensus
    /// Where waiter ids come from (and, through their leaders, flight ids): an atomic counter, so that a caller
    /// takes the table's lock once to join rather than twice. Under load every lock a joiner takes is one its
    /// thread may be preempted holding, while the other callers wait. Drawn with `wrappingAdd` (one `lock xadd`, where
    /// the trapping `add` is a compare-and-swap loop that retries when another caller drew first; see `Counters`).
    private nonisolated let waiterIDs = Atomic<UInt64>(0)
    /// The scheduler the deadlines of callers of ``join(_:at:tag:deadline:)`` are kept on, and what such a caller leaves
    /// with when its deadline passes: one pair for the whole coalescer (a client has one scheduler and one timeout
    /// error), so that a joiner's deadline is two durations, handed to the table without a reference to retain and kept
    /// there without one to release; `nil` for a coalescer whose joiners have no deadlines.
    private nonisolated let joinTimeouts: JoinTimeouts?

    /// Creates an empty coalescer.
    ///
    /// ```swift
    /// let thumbnails = RequestCoalescer<URL, Data>(whenAbandoned: .finish)
    /// ```
    ///
    /// - Parameter policy: What to do with a flight once all of its waiters have cancelled; defaults to
    ///   ``AbandonmentPolicy/cancel``.
    /// - Important: Share one instance between all callers that should be coalesced.
    public init(whenAbandoned policy: AbandonmentPolicy = .cancel) {
        self.policy = policy
        self.joinTimeouts = nil
        let table = Table()
        self.census = table.census
        self.table = Locked(table)
    }

    /// A coalescer whose joiners' deadlines (``join(_:at:tag:deadline:)``) are kept on `joinTimeouts.scheduler` and end
    /// with `joinTimeouts.error`.
    init(whenAbandoned policy: AbandonmentPolicy = .cancel, joinTimeouts: JoinTimeouts) {
        self.policy = policy
        self.joinTimeouts = joinTimeouts
        let table = Table()
        self.census = table.census
        self.table = Locked(table)
    }

    /// Number of flights currently in the table (for diagnostics and tests).
    ///
    /// ```swift
    /// assert(await coalescer.flightCount == 0, "a flight leaked")
    /// ```
    ///
    /// - Important: A snapshot; it may be stale as soon as it is returned. A flight abandoned under
    ///   ``AbandonmentPolicy/cancel`` is no longer counted even if its task is still winding down.
    public var flightCount: Int { table.withLock { $0.flights.count } }

    /// Total number of callers currently waiting, across all flights (for diagnostics and tests).
    ///
    /// ```swift
    /// while await coalescer.waiterCount < expected { await Task.yield() }
    /// ```
    ///
    /// - Important: A snapshot. A caller is counted from the moment it is registered on a flight until it is
    ///   resumed, so a cancelled caller stops counting as soon as it has left.
    public var waiterCount: Int { table.withLock { $0.waiting } }

    /// The room the storage a finished flight left for the next one's joiners has (for tests).
    var spareCapacities: (joiners: Int, deadlines: Int) { table.withLock { $0.spareCapacities } }

    /// Number of times a flight task reported its outcome, including stale reports from abandoned flights.
    /// Not public API: tests use it to know that a late completion has been processed.
    var reportedOutcomes: Int { table.withLock { $0.reportedOutcomes } }

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
    public nonisolated func run(
        _ key: Key,
        operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Coalesced<Value> {
        try await run(key, tag: 0, operation: ClosureOperation(operation: operation, bound: nil))
    }

    /// How long one caller waits for a flight before leaving with an error (see ``Courier/WaitBound``).
    typealias WaitBound = Courier.WaitBound

    /// ``run(_:operation:)`` where the caller leaves after its own bound, as if cancelled, but with `bound.error`:
    /// the flight goes on for the others (and stops when nobody is left to wait, as under cancellation).
    ///
    /// The bounds of a flight's callers are kept with the flight, which sets one scheduler entry for the earliest
    /// (see ``FlightTable/Bounds/timer``); a caller that is answered in time leaves its deadline behind, and it goes
    /// with the flight.
    nonisolated(nonsending) func run(
        _ key: Key, bound: WaitBound?, operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Coalesced<Value> {
        try await run(key, tag: 0, operation: ClosureOperation(operation: operation, bound: bound))
    }

    /// ``run(_:bound:operation:)`` with the flight's work as a ``FlightOperation``, which also gives the caller's
    /// bound (``FlightOperation/waitBound()``).
    ///
    /// `tag` names the caller (a call id): when the caller the flight's events belong to leaves while others still
    /// wait, the operation is told the tag of one that waits (``EventAttributing/attributeEvents(to:generation:)``)
    /// before the caller that left is resumed.
    ///
    /// The bound is asked for in ``enter(_:id:tag:for:operation:)``, a plain function: built here, it was a value of
    /// this async frame that every waiter's task holds, and was copied into the registration (about 150 instructions
    /// and 80 bytes of frame per caller).
    nonisolated(nonsending) func run<Operation: FlightOperation<Value>>(
        _ key: Key, tag: UInt64, operation: Operation
    ) async throws -> Coalesced<Value> {
        // A caller already cancelled is turned away by `register`, under the lock, before it can start a flight: a
        // check here as well would cost every call a read of its task's status.
        let waiterID = waiterIDs.wrappingAdd(1, ordering: .relaxed).newValue
        var registration = Table.Registration.cancelled
        // The executor-inheriting form, as in `join(_:tag:deadline:)`: two executor checks fewer per caller.
        let value = try await _unsafeInheritExecutor_withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (waiter: Table.Waiter) in
                registration = enter(waiter, id: waiterID, tag: tag, for: key, operation: operation)
            }
        } onCancel: {
            withdraw(key, waiterID: waiterID, error: CancellationError())
        }
        showHandOverToThreadSanitizer()
        switch registration {
        case .joined(let flightID): return Coalesced(value: value, joined: true, flightID: flightID)
        case .lead(let flightID): return Coalesced(value: value, joined: false, flightID: flightID)
        case .cancelled: throw CancellationError()
        }
    }

    // MARK: Joining Without an Operation

    /// Where a look found a flight (``FlightTable/Sighting``): joining with it does not hash the key again.
    typealias Sighting = FlightTable<Key, Value>.Sighting

    /// Where the flight for `key` is, when one is in the air now: a caller that finds one may
    /// ``join(_:at:tag:deadline:)`` it without building the work it would run as a leader. A snapshot: the flight may
    /// land before the caller joins.
    nonisolated func sighting(of key: Key) -> Sighting? {
        // Most calls lead: an empty table answers without its lock.
        guard mayHaveFlights else { return nil }
        return table.withLock { $0.sighting(of: key) }
    }

    /// Whether any flight may be in the air, read without the table's lock: `false` when none was a moment ago (a
    /// caller that finds none leads, and joins a flight that starts meanwhile when it registers).
    nonisolated var mayHaveFlights: Bool { census.flights.load(ordering: .relaxed) > 0 }

    /// ``sighting(of:)``, with what the flight's leader noted on it (``FlightOperation/flightNote``).
    nonisolated func notedSighting(of key: Key) -> (sighting: Sighting, note: UInt64)? {
        guard mayHaveFlights else { return nil }
        return table.withLock { $0.notedSighting(of: key) }
    }

    /// Joins the flight for `key` as ``run(_:tag:operation:)`` does, but never leads one: `nil` when there is no flight
    /// to join (it landed since ``sighting(of:)`` saw it), and the caller then goes the way of a leader. With the
    /// `sighting` of `key`, the flight is found again without hashing the key.
    ///
    /// The caller keeps its own deadline and cancellation: it leaves at `deadline` (a point on the clock of the
    /// coalescer's ``JoinTimeouts/scheduler``) with its ``JoinTimeouts/error``, or at once when its task is cancelled.
    /// Nothing here is allocated: a joiner needs no operation, and its bound is a value handed to the table under its
    /// lock. A coalescer made without ``JoinTimeouts`` ignores `deadline`.
    nonisolated(nonsending) func join(_ key: Key, at sighting: Sighting? = nil, tag: UInt64, deadline: JoinDeadline?)
        async throws -> Coalesced<Value>?
    {
        let waiterID = waiterIDs.wrappingAdd(1, ordering: .relaxed).newValue
        // What the wait's operation needs, in one variable that its closures capture by address: captured one by one,
        // each value was copied into the closures' contexts, which live in this frame (Docs/Performance.md#joining).
        // The key is not in it: a parameter, it is captured borrowed, where a copy in the variable retained the key
        // (which every joiner of the flight shares) and released it after the wait.
        var joiner = Joiner(sighting: sighting, tag: tag, deadline: deadline)
        // Set by the cancellation handler before it withdraws the caller, and read under the table's lock when the
        // caller registers: a handler that ran first (the task was cancelled before it registered) has set it by then.
        // Asking the task instead (`Task.isCancelled`) cost a joiner about 80 instructions and a retain of its task.
        let cancelled = Atomic(false)
        let value: Value
        do {
            // The executor-inheriting form: the public one takes an `isolation` and checks the executor on entry and
            // again after its operation, two of a joiner's executor checks (Docs/Performance.md#joining).
            value = try await _unsafeInheritExecutor_withTaskCancellationHandler {
                try await withUnsafeThrowingContinuation { (waiter: Table.Waiter) in
                    enterAsJoiner(waiter, id: waiterID, key, &joiner, cancelled: cancelled)
                }
            } onCancel: {
                cancelled.store(true, ordering: .relaxed)
                withdraw(key, waiterID: waiterID, error: CancellationError())
            }
        } catch {
            showHandOverToThreadSanitizer()
            guard joiner.registration != nil else { return nil }
            throw error
        }
        showHandOverToThreadSanitizer()
        guard case .joined(let flightID) = joiner.registration else { throw CancellationError() }
        return Coalesced(value: value, joined: true, flightID: flightID)
    }

    /// Takes and drops the table's lock in debug builds, where ThreadSanitizer runs; nothing in release builds.
    ///
    /// A flight that answers before its waiter has suspended resumes it inside the concurrency runtime, which is not
    /// instrumented: ThreadSanitizer then sees the waiter read the flight's answer with no hand-over, and reported the
    /// `Exchange` the flight built as raced (`AuthenticationTests`, 1,000 callers of one key, 2 runs in 3). The flight
    /// finishes under this lock before it resumes anyone, so taking it afterwards shows the hand-over that the
    /// continuation made.
    @inline(__always)
    private nonisolated func showHandOverToThreadSanitizer() {
        #if DEBUG
            table.withLock { _ in }
        #endif
    }

    /// A caller of ``join(_:at:tag:deadline:)`` on its way into the table, and how it entered.
    private struct Joiner {
        let sighting: Sighting?
        let tag: UInt64
        let deadline: JoinDeadline?
        /// How the caller entered; `nil` once it found no flight to join.
        var registration: Table.Registration? = .cancelled
    }

    /// Registers a suspended caller on the flight for `key`, with its deadline; `nil` (the caller resumed with
    /// ``NoFlight``) when there is none.
    @inline(never)  // its temporaries stay off the async frame of `join`, which every joiner's task holds
    private nonisolated func enterAsJoiner(
        _ waiter: Table.Waiter, id waiterID: UInt64, _ key: Key, _ joiner: inout Joiner,
        cancelled: borrowing Atomic<Bool>
    ) {
        joiner.registration = enterAsJoiner(
            waiter, id: waiterID, tag: joiner.tag, for: key, at: joiner.sighting, deadline: joiner.deadline,
            cancelled: cancelled)
    }

    /// ``enterAsJoiner(_:id:_:_:cancelled:)``'s work. `cancelled` is the caller's flag, which its cancellation handler
    /// sets before it withdraws the caller: read under the table's lock, it is set when the handler ran first.
    @inline(__always)
    private nonisolated func enterAsJoiner(
        _ waiter: Table.Waiter, id waiterID: UInt64, tag: UInt64, for key: Key, at sighting: Sighting?,
        deadline: JoinDeadline?, cancelled: borrowing Atomic<Bool>
    ) -> Table.Registration? {
        let entered: (Table.Registration, Table.Attribution?)? = table.withLock { table in
            guard
                let (registration, attribution, timer) = table.join(
                    waiter, id: waiterID, tag: tag, for: key, at: sighting,
                    isCancelled: cancelled.load(ordering: .relaxed), deadline: joinTimeouts == nil ? nil : deadline)
            else { return nil }
            // The joiner's bound comes first of the flight's: the timer moves to it (see `addDeadline`).
            if case .joined(let flightID) = registration, let timer, let scheduler = joinTimeouts?.scheduler {
                setTimer(&table, at: timer, on: scheduler, key: key, flightID: flightID)
            }
            return (registration, attribution)
        }
        guard let (registration, attribution) = entered else {
            waiter.resume(throwing: NoFlight())
            return nil
        }
        attribution?.apply()
        if case .cancelled = registration { waiter.resume(throwing: CancellationError()) }
        return registration
    }

    /// Registers a suspended caller: it joins the flight for `key`, or leads a new one and starts its task, or is
    /// resumed at once when its task was cancelled already.
    @inline(never)  // its temporaries stay off the async frame of `run`, which every waiter's task holds
    private nonisolated func enter<Operation: FlightOperation<Value>>(
        _ waiter: Table.Waiter, id waiterID: UInt64, tag: UInt64, for key: Key, operation: Operation
    ) -> Table.Registration {
        // Read before the lock: a bound reads the clock.
        let bound = operation.waitBound()
        let (registration, attribution) = table.withLock { table in
            let (registration, attribution) = table.register(
                waiter, id: waiterID, tag: tag, for: key, isCancelled: Task.isCancelled,
                attributing: operation.eventAttribution, note: operation.flightNote)
            if case .joined(let flightID) = registration, let bound, let limit = bound.joining {
                addDeadline(&table, bound, limit, key: key, flightID: flightID, waiterID: waiterID)
            }
            return (registration, attribution)
        }
        attribution?.apply()
        switch registration {
        case .cancelled:
            waiter.resume(throwing: CancellationError())
        case .joined:
            break
        case .lead(let flightID):
            // The flight's task starts on this thread and runs until it first suspends; an operation that never
            // suspends has resumed this caller before `launch` returns.
            let task = launch(flightID, for: key, operation: operation)
            let attached = table.withLock { table in
                guard table.attach(task, to: key, flightID: flightID) else { return false }
                if let bound, let limit = bound.leading {
                    addDeadline(&table, bound, limit, key: key, flightID: flightID, waiterID: waiterID)
                }
                return true
            }
            if !attached { task.cancel() }
        }
        return registration
    }

    /// Removes a waiter that leaves early and resumes it with `error`; cancels the flight if it was the last.
    private nonisolated func withdraw(_ key: Key, waiterID: UInt64, error: any Error) {
        let (waiter, abandoned, timer, attribution) = table.withLock {
            $0.leave(key, waiterID: waiterID, policy: policy)
        }
        // Before the caller is resumed: its last event must follow every event of the flight attributed to it.
        attribution?.apply()
        waiter?.resume(throwing: error)
        abandoned?.cancel()
        timer.map { $0.scheduler.cancel($0.entry) }
    }

    /// Adds a waiter's bound to its flight, under the table's lock, and moves the flight's timer earlier when this
    /// bound ends first. (The scheduler's lock is taken inside the table's; the scheduler never calls out under its
    /// own lock, so the two never wait on each other.)
    private nonisolated func addDeadline(
        _ table: inout Table, _ bound: WaitBound, _ limit: Duration, key: Key, flightID: UInt64, waiterID: UInt64
    ) {
        let scheduler = bound.scheduler
        let waiter = Table.WaiterDeadline(waiterID: waiterID, limit: limit, error: bound.error)
        let at = scheduler.elapsed.saturatingAdding(limit)
        guard let target = table.addDeadline(at, waiter, to: key, flightID: flightID) else { return }
        setTimer(&table, at: target, on: scheduler, key: key, flightID: flightID)
    }

    private nonisolated func setTimer(
        _ table: inout Table, at target: Duration, on scheduler: DeadlineScheduler, key: Key, flightID: UInt64
    ) {
        let entry = scheduler.schedule(at: target) { [self] in
            expire(key, flightID: flightID, scheduler: scheduler)
        }
        let timer = Table.Timer(entry: entry, at: target, scheduler: scheduler)
        if let replaced = table.setTimer(timer, for: key, flightID: flightID) {
            replaced.scheduler.cancel(replaced.entry)
        }
    }

    /// The flight's timer fired: its waiters whose bound passed leave with their errors, and the timer is set again
    /// for the next bound.
    private nonisolated func expire(_ key: Key, flightID: UInt64, scheduler: DeadlineScheduler) {
        let now = scheduler.elapsed
        let joinTimeout = joinTimeouts?.error ?? { _ in CancellationError() }
        let expiry = table.withLock { table in
            let expiry = table.expire(key, flightID: flightID, now: now, policy: policy, joinTimeout: joinTimeout)
            if let next = expiry.next { setTimer(&table, at: next, on: scheduler, key: key, flightID: flightID) }
            return expiry
        }
        expiry.attribution?.apply()
        for (waiter, error) in expiry.expired { waiter.resume(throwing: error) }
        expiry.abandoned?.cancel()
    }

    /// Starts the flight's task with `Task.immediate` where the system has it: it runs on the calling thread until its
    /// first suspension, so a flight costs no hop to another thread to start, and an operation that completes without
    /// suspending (a fresh answer from memory) never waits for a thread at all. It is started from this nonisolated method, so
    /// neither the task nor the operation runs on the actor's executor.
    @inline(never)  // its temporaries stay off the async frame of `run`, which every waiter's task holds
    private nonisolated func launch<Operation: FlightOperation<Value>>(
        _ flightID: UInt64,
        for key: Key,
        operation: Operation
    ) -> FlightTask {
        // `Task.immediate` is Swift 6.2's (macOS 26 and its peers); older Apple systems start the flight with one hop
        // to the global executor, which changes when it first runs, never what it does. Each branch passes its own
        // closure literal: a closure held in a variable first cost two more allocations per flight.
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            // The loop, which runs once, is what makes the optimizer inline `Task.immediate` here (it favours call sites
            // in loops). Inlined, it sees its default `executorPreference: nil` as a constant; called out of line, Swift
            // 6.3.1 tests that argument wrongly and gives the task a preference record for `nil`, and every executor
            // check of the task then takes the task's status lock: about 1,350 instructions per flight
            // (Docs/Performance.md#task-immediate). `Scripts/instructions.sh --check` fails when the record is back.
            var task: FlightTask?
            repeat {
                task = Task.immediate { [table] () async throws in
                    await Self.fly(operation, flightID, for: key, table: table)
                }
            } while task == nil
            return task!
        } else {
            return Task { [table] () async throws in
                await Self.fly(operation, flightID, for: key, table: table)
            }
        }
    }

    /// The body of a flight's task: runs the operation and resumes every waiter with its outcome.
    @inline(__always)
    private static func fly<Operation: FlightOperation<Value>>(
        _ operation: Operation, _ flightID: UInt64, for key: Key, table: Locked<Table>
    ) async {
        let outcome: Result<Value, any Error>
        do {
            outcome = .success(try await operation.run())
        } catch {
            outcome = .failure(error)
        }
        var waiters = table.withLock { table in
            let finished = table.finish(key, flightID: flightID)
            // The flight's timer goes with it (the scheduler's lock inside the table's, as in `addDeadline`).
            if let timer = finished?.timer { timer.scheduler.cancel(timer.entry) }
            // Under the lock, which every caller takes again once resumed in debug builds: ThreadSanitizer then sees
            // what the operation records here handed over with the answer.
            if (finished?.waiters.count ?? 0) > 1, case .success(let value) = outcome {
                operation.answeredOthers(value)
            }
            return finished?.waiters
        }
        waiters?.resumeAll(with: outcome)
        // Their storage, for the next flight's joiners, when it has room for any.
        guard let joiners = waiters?.takeJoiners(), joiners.capacity > 0 else { return }
        table.withLock { $0.recycle(joiners) }
    }
}

/// How long one caller waits for a flight before leaving with an error, kept on a ``DeadlineScheduler``.
struct WaitBound: Sendable {
    let scheduler: DeadlineScheduler
    /// The longest wait for a flight this caller leads, or `nil` for no bound of its own.
    let leading: Duration?
    /// The longest wait for a flight this caller joins, or `nil` for no bound of its own.
    let joining: Duration?
    /// What the caller is resumed with when its bound passes.
    let error: @Sendable (Duration) -> any Error
}

/// When a caller that joins a flight leaves it if the flight has not answered: `limit` after `start`, on the clock of its
/// coalescer's ``JoinTimeouts/scheduler``. Two durations and no reference: a joiner's task carries it, and the flight
/// keeps it; the sum is made only where the flight needs the point in time (most joiners' never is).
struct JoinDeadline: Sendable {
    /// When the caller started, as time elapsed on the scheduler's clock.
    let start: Duration
    /// The caller's bound, handed to ``JoinTimeouts/error``.
    let limit: Duration

    /// When the caller leaves, as time elapsed on the scheduler's clock.
    var at: Duration { start.saturatingAdding(limit) }
}

/// Where a coalescer keeps its joiners' deadlines, and what a joiner whose deadline passed is resumed with (given the
/// joiner's bound).
struct JoinTimeouts: Sendable {
    let scheduler: DeadlineScheduler
    let error: @Sendable (Duration) -> any Error
}

/// Resumes a caller of ``RequestCoalescer/join(_:tag:deadline:)`` that found no flight to join; never seen outside.
private struct NoFlight: Error {}

/// The work of a flight, run in the flight's task. A value rather than a closure: the coalescer is specialized for it,
/// and `run` is `nonisolated(nonsending)`, so the flight's task enters it with no executor check (a closure is a plain
/// async function, checked on entry and again on return: about 250 instructions per flight).
protocol FlightOperation<Value>: Sendable {
    associatedtype Value: Sendable
    /// Does the work; what it returns or throws goes to every waiter of the flight.
    nonisolated(nonsending) func run() async throws -> Value

    /// Whom to tell when the caller the flight's events belong to leaves while the flight goes on; `nil`, the
    /// default, when the flight emits no events of its own. A class, so that the flight keeps one reference: an
    /// operation kept as an existential made every read of a ``FlightTable/Flight`` go through its value witnesses.
    var eventAttribution: (any EventAttributing)? { get }

    /// How long the caller that passes this operation waits for the flight it leads or joins; `nil`, the default,
    /// for no bound. Asked once per caller, when it registers, outside the coalescer's lock.
    func waitBound() -> WaitBound?

    /// What a caller that looks at the flight this operation leads reads back (``RequestCoalescer/notedSighting(of:)``);
    /// `0`, the default, for nothing. The client notes that its leader's cache lookup found nothing stored
    /// (``NothingStored``).
    var flightNote: UInt64 { get }

    /// Told that the flight answered `value` for callers besides its leader, under the coalescer's lock and before any
    /// of them is resumed; nothing, the default. The client stamps the answer's time once for every caller that shared
    /// it (``Exchange/markAnswered(at:)``).
    func answeredOthers(_ value: Value)
}

extension FlightOperation {
    /// No bound: the caller waits until the flight answers or it is cancelled.
    func waitBound() -> WaitBound? { nil }

    /// Nothing to attribute: the flight emits no events of its own.
    var eventAttribution: (any EventAttributing)? { nil }

    /// Nothing noted.
    var flightNote: UInt64 { 0 }

    /// Nothing to do.
    func answeredOthers(_ value: Value) {}
}

/// The events of a flight, which belong to one of its callers at a time (see ``FlightOperation/eventAttribution``).
protocol EventAttributing: AnyObject, Sendable {
    /// Called when the caller the flight's events belong to has left while the flight goes on: from now on they
    /// belong to the caller tagged `owner` (`nil`: no caller is left). Called before the caller that left is resumed,
    /// outside the coalescer's lock; `generation` increases with every call for one flight, and a call older than one
    /// already applied must be ignored (two callers leaving at once may report out of order).
    func attributeEvents(to owner: UInt64?, generation: UInt64)
}

/// A flight's work given as a closure, as ``RequestCoalescer/run(_:operation:)`` takes it, with its caller's bound.
private struct ClosureOperation<Value: Sendable>: FlightOperation {
    let operation: @Sendable () async throws -> Value
    let bound: WaitBound?

    func waitBound() -> WaitBound? { bound }

    nonisolated(nonsending) func run() async throws -> Value {
        try await operation()
    }
}
