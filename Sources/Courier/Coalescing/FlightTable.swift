import Synchronization

/// The task a flight runs in. Its operation never throws (the outcome goes to the waiters), but it is declared as
/// throwing: `Task.immediate` wraps a non-throwing operation in one more async function, a frame allocated and an
/// executor checked on every flight.
typealias FlightTask = Task<Void, any Error>

/// The coalescer's state as a plain value: which flights are in the air and who waits on each.
///
/// Every method is a short critical section run under ``RequestCoalescer``'s lock. None resumes a continuation
/// or cancels a task: each returns what must happen, and the caller does it after the lock is released (the waiters
/// a flight hands back are resumed with `Waiters.resumeAll(with:)` then). A new flight's task is started by its
/// leader after `register`, outside the lock, and kept with `attach`.
struct FlightTable<Key: Hashable & Sendable, Value: Sendable> {
    /// A suspended caller. Unchecked: the table hands each waiter out exactly once (`finish` or `leave`, never both),
    /// and a checked continuation costs an allocation per caller.
    typealias Waiter = UnsafeContinuation<Value, any Error>

    /// One in-flight operation and the callers suspended on it.
    struct Flight {
        let id: UInt64
        /// `nil` from registration until ``FlightTable/attach(_:to:flightID:)``: the task is started outside the lock,
        /// because it runs on the leader's thread until it first suspends and may finish (taking the lock) meanwhile.
        var task: FlightTask?
        var waiters: Waiters
        /// Told whose caller the flight's events belong to when that caller leaves (see ``Attribution``); `nil` when
        /// the flight's work emits no events of its own.
        let attributing: (any EventAttributing)?
        /// The tag of the waiter the flight's events are attributed to now; `nil` when none is left.
        var owner: UInt64?
        /// Counts the changes of `owner`, so that the operation can tell a late report from the latest.
        var ownerChanges: UInt64 = 0
        /// The bounds of its waiters that have one; `nil` for a flight without any. Kept in the flight, so that a joiner
        /// adds its bound in the same access that adds it, without a second lookup.
        var bounds: Bounds? = nil
        /// What its leader's operation noted for those who look at the flight (``FlightOperation/flightNote``); `0`
        /// for nothing.
        var note: UInt64 = 0
    }

    /// Whose caller a flight's events belong to from now on, to hand to its operation after the critical section and
    /// before the caller that left is resumed: that caller's last event then follows every event of the flight
    /// attributed to it.
    struct Attribution {
        let target: any EventAttributing
        /// The tag of a caller still waiting, or `nil` when none is.
        let owner: UInt64?
        /// Increases with every change; an operation ignores an attribution older than one it has.
        let generation: UInt64

        func apply() {
            target.attributeEvents(to: owner, generation: generation)
        }
    }

    /// The bounds of one flight's waiters (``Flight/bounds``).
    struct Bounds: Sendable {
        /// When each waiter that has a bound of its own leaves, earliest first. Entries of waiters that left earlier
        /// stay until they reach the top or until ``FlightTable/leave(_:waiterID:policy:)`` compacts them.
        var deadlines = DeadlineHeap<WaiterDeadline>()
        /// The deadlines of joiners (``FlightTable/join(_:id:tag:for:at:isCancelled:deadline:)``) that started no
        /// earlier than the last one here, with the same bound: every joiner of a flight whose callers share one
        /// timeout. Their deadlines are in order from `joinedHead` on, so adding one appends two durations and an id
        /// (no sifting, no sum, nothing to retain or release, and no look at the timer, which fires no later than the
        /// last one's), and the earliest is the first. Any other joiner's deadline goes to ``deadlines``.
        var joined: [JoinedDeadline] = []
        /// Where the deadlines in ``joined`` still to pass start: the ones before it passed or were dropped.
        var joinedHead = 0
        /// The one timer entry that fires at the earliest of ``deadlines`` and ``joined``: a flight with a thousand
        /// joiners keeps one entry in the scheduler, not one (and one allocated closure) per joiner.
        var timer: Timer?

        /// The deadlines kept, including those of waiters that left.
        var count: Int { deadlines.count + joined.count - joinedHead }

        /// The earliest deadline kept (of a waiter that may have left), `nil` when none is.
        var earliest: Duration? {
            let heap = deadlines.peek()?.deadline
            guard joinedHead < joined.count else { return heap }
            let first = joined[joinedHead].deadline.at
            guard let heap else { return first }
            return min(heap, first)
        }

        /// Takes ``joined``'s storage out, emptied, for ``FlightTable/spares`` (emptied with one owner, as
        /// ``Waiters/takeJoiners()`` is).
        mutating func takeJoined() -> [JoinedDeadline] {
            var taken: [JoinedDeadline] = []
            swap(&taken, &joined)
            joinedHead = 0
            taken.removeAll(keepingCapacity: true)
            return taken
        }

        /// Keeps only the deadlines of waiters for whom `isWaiting` holds.
        mutating func keep(where isWaiting: (UInt64) -> Bool) {
            deadlines.removeAll { !isWaiting($0.waiterID) }
            joined = joined[joinedHead...].filter { isWaiting($0.waiterID) }
            joinedHead = 0
        }
    }

    /// When a waiter leaves by itself if its flight has not answered, and with what.
    struct WaiterDeadline: Sendable {
        let waiterID: UInt64
        /// The waiter's bound, handed to `error`.
        let limit: Duration
        /// `nil` for a joiner, which leaves with its coalescer's error (see ``JoinTimeouts``).
        let error: (@Sendable (Duration) -> any Error)?
    }

    /// A joiner's deadline, kept in ``Bounds/joined``; it leaves with its coalescer's error (see ``JoinTimeouts``).
    struct JoinedDeadline: Sendable {
        let deadline: JoinDeadline
        let waiterID: UInt64
    }

    /// A flight's timer entry, with the scheduler that holds it and the time it fires.
    struct Timer: Sendable {
        let entry: UInt64
        let at: Duration
        let scheduler: DeadlineScheduler
    }

    /// What ``expire(_:flightID:now:policy:)`` took out of a flight.
    struct Expiry {
        /// The waiters whose deadline passed, each with the error to resume it with.
        var expired: [(waiter: Waiter, error: any Error)] = []
        /// The flight's next deadline, for its timer; `nil` when it has none left or is gone.
        var next: Duration?
        /// The flight's task when the expired waiters were its last and the policy abandons it.
        var abandoned: FlightTask?
        /// Whose the flight's events are now, when an expired waiter owned them.
        var attribution: Attribution?
    }

    /// The callers of one flight: the first one inline, the joiners in the order they joined.
    ///
    /// Most flights are never joined, and a dictionary for one waiter cost two allocations per flight. Joiners are
    /// appended to an array: keyed by id in a dictionary, each join hashed its id and the table grew by rehashing,
    /// about 1,000 instructions per joiner. A caller that leaves early only knows its id, so the first one to leave
    /// builds an index from ids to slots, and later joins keep it up to date: leaving stays O(1), and a burst of n
    /// cancellations O(n), not O(n²). A slot left empty is reclaimed once the empty ones are the majority.
    struct Waiters {
        /// A joiner's slot: its waiter is `nil` once it left.
        typealias Joiner = (id: UInt64, waiter: Waiter?, tag: UInt64)

        private var first: (id: UInt64, waiter: Waiter, tag: UInt64)?
        private var joiners: [Joiner] = []
        /// Each waiting joiner's slot in `joiners`, from the first early leave on; the other slots are empty.
        private var slots: [UInt64: Int]?

        init(first id: UInt64, _ waiter: Waiter, tag: UInt64) {
            first = (id, waiter, tag)
        }

        var count: Int { (first == nil ? 0 : 1) + (slots?.count ?? joiners.count) }
        var isEmpty: Bool { count == 0 }

        /// Adds a joiner; the first one takes `spare`'s storage (``FlightTable/spares``), which is left empty.
        mutating func add(_ waiter: Waiter, id: UInt64, tag: UInt64, spare: inout [Joiner]) {
            if joiners.capacity == 0 { swap(&joiners, &spare) }
            slots?[id] = joiners.count
            joiners.append((id, waiter, tag))
        }

        /// Takes the joiners' storage out, emptied, once they were resumed (``resumeAll(with:)``): for
        /// ``FlightTable/spares``. Emptied here, where it has one owner: emptied where it has two, it would be replaced
        /// by a new buffer of the same capacity.
        mutating func takeJoiners() -> [Joiner] {
            var taken: [Joiner] = []
            swap(&taken, &joiners)
            slots = nil
            taken.removeAll(keepingCapacity: true)
            return taken
        }

        /// The tag of a waiter still waiting (the earliest), or `nil` when none is.
        var anyTag: UInt64? {
            if let first { return first.tag }
            return joiners.first { $0.waiter != nil }?.tag
        }

        func contains(_ id: UInt64) -> Bool {
            if first?.id == id { return true }
            guard let slots else { return joiners.contains { $0.id == id } }
            return slots[id] != nil
        }

        /// Removes and returns the waiter with `id` and its tag, or `nil` when it is not (or no longer) waiting.
        mutating func remove(_ id: UInt64) -> (waiter: Waiter, tag: UInt64)? {
            if let first, first.id == id {
                self.first = nil
                return (first.waiter, first.tag)
            }
            if slots == nil { slots = Self.index(joiners) }
            guard let slot = slots?.removeValue(forKey: id), let waiter = joiners[slot].waiter else { return nil }
            let tag = joiners[slot].tag
            joiners[slot].waiter = nil
            let emptied = joiners.count - (slots?.count ?? 0)
            if emptied > FlightTable.compactionFloor, emptied > joiners.count / 2 {
                joiners.removeAll { $0.waiter == nil }
                slots = Self.index(joiners)
            }
            return (waiter, tag)
        }

        /// Resumes every waiter with `outcome`. Called once, after the flight left the table.
        func resumeAll(with outcome: Result<Value, any Error>) {
            first?.waiter.resume(with: outcome)
            for joiner in joiners { joiner.waiter?.resume(with: outcome) }
        }

        private static func index(_ joiners: [(id: UInt64, waiter: Waiter?, tag: UInt64)]) -> [UInt64: Int] {
            var slots = [UInt64: Int](minimumCapacity: joiners.count)
            for (slot, joiner) in joiners.enumerated() where joiner.waiter != nil { slots[joiner.id] = slot }
            return slots
        }
    }

    /// What ``register(_:id:for:isCancelled:)`` decided.
    enum Registration {
        /// The caller was already cancelled: resume it with `CancellationError`, start nothing.
        case cancelled
        /// The caller joined the flight with this id.
        case joined(flightID: UInt64)
        /// The caller leads a new flight with this id; its task was started.
        case lead(flightID: UInt64)
    }

    private(set) var flights: [Key: Flight] = [:]
    /// Changes whenever a flight is added to or removed from `flights`: an index into it taken while it had this value
    /// is still the same flight's (``Sighting``). Joining changes a flight in place, which moves no index.
    private var layout: UInt64 = 0 {
        // A sighting of the old layout is stale, and the key it holds need not outlive its flight.
        didSet { lastSighting = nil }
    }
    /// The flight the last look found, with its key: while no flight is added or removed, the next caller of the same
    /// key (a burst of callers of one key is what a coalescer is for) finds it by comparing keys, without looking its
    /// key up. (Measured again once `RequestKey._rawHashValue(seed:)` had made hashing cheap: the look costs a joiner
    /// 111 instructions with this and about 310 without, in the dictionary's probe and the key's comparison.)
    private var lastSighting: (key: Key, sighting: Sighting, note: UInt64)?
    /// How many flights are in the table, for callers who read it without the table's lock (``FlightCensus``).
    let census = FlightCensus()
    /// Kept alongside `flights` so the waiter count is O(1) instead of a sum over every flight.
    private(set) var waiting = 0
    /// Number of times a flight reported its outcome, including stale reports from abandoned flights.
    private(set) var reportedOutcomes = 0
    /// Storage a finished flight's joiners and their deadlines left, empty, for the next flight's first joiner to take:
    /// a burst of joiners then fills arrays that have room for them, instead of growing two arrays ten times each over
    /// a thousand joiners (an allocation, a copy and a free each time).
    private var spares = Spares()

    /// Adds a waiter to the flight for `key`, or opens a flight for it; the leader then starts the flight's task and
    /// hands it to ``attach(_:to:flightID:)``.
    ///
    /// Waiter ids are unique across flights (``leave(_:waiterID:policy:)`` relies on it): the coalescer draws them
    /// from one counter. A flight takes its leader's id, so flight ids are unique too.
    ///
    /// `tag` names the caller for its flight's events (a call id); `attributing` is kept when the caller leads.
    mutating func register(
        _ waiter: Waiter, id waiterID: UInt64, tag: UInt64 = 0, for key: Key, isCancelled: Bool,
        attributing: @autoclosure () -> (any EventAttributing)? = nil, note: UInt64 = 0
    ) -> (Registration, Attribution?) {
        // Checked under the lock: a cancellation that lands after this point finds the waiter registered, because
        // the cancellation handler takes the same lock.
        if isCancelled { return (.cancelled, nil) }
        waiting += 1
        // Joining hashes the key once and updates the flight in place through its index; copying the `Flight` out
        // and writing it back would copy its waiter table and make every join O(n).
        if let index = flights.index(forKey: key) {
            return Self.join(&flights.values[index], waiter, id: waiterID, tag: tag, spare: &spares.joiners)
        }
        let flightID = waiterID
        flightAdded()
        flights[key] = Flight(
            id: flightID, task: nil, waiters: Waiters(first: waiterID, waiter, tag: tag), attributing: attributing(),
            owner: tag, note: note)
        return (.lead(flightID: flightID), nil)
    }

    /// Called just before a flight is added to `flights`.
    private mutating func flightAdded() {
        layout &+= 1
        census.flights.wrappingAdd(1, ordering: .relaxed)
    }

    /// Called just before a flight is removed from `flights`.
    private mutating func flightRemoved() {
        layout &+= 1
        census.flights.wrappingSubtract(1, ordering: .relaxed)
    }

    /// Where a look found the flight for a key: a caller that joins it soon after finds it again without hashing the key,
    /// unless a flight was added or removed meanwhile.
    struct Sighting: Sendable {
        fileprivate let index: [Key: Flight].Index
        fileprivate let layout: UInt64
    }

    /// Where the flight for `key` is in the table, or `nil` when there is none; an empty table answers without hashing
    /// the key, and so does the flight the last look found, while the table's layout is unchanged.
    mutating func sighting(of key: Key) -> Sighting? {
        notedSighting(of: key)?.sighting
    }

    /// ``sighting(of:)``, with what the flight's leader noted on it (``Flight/note``).
    mutating func notedSighting(of key: Key) -> (sighting: Sighting, note: UInt64)? {
        guard !flights.isEmpty else { return nil }
        // Compared in place: a binding of the last sighting copies its key (a retain and a release of an object every
        // joiner of the key shares, whose count the cores then pass back and forth).
        if lastSighting != nil, lastSighting!.key == key { return (lastSighting!.sighting, lastSighting!.note) }
        guard let index = flights.index(forKey: key) else { return nil }
        let sighting = Sighting(index: index, layout: layout)
        let note = Self.note(of: &flights.values[index])
        lastSighting = (key, sighting, note)
        return (sighting, note)
    }

    /// Adds a waiter to the flight for `key`, as ``register(_:id:tag:for:isCancelled:attributing:)`` does, but never
    /// opens one: `nil` when there is no flight for `key` (and nothing changed).
    ///
    /// A `deadline` is added to the flight's bounds in the same access; `timer` is then the time the flight's timer must
    /// be set to (see ``addDeadline(_:_:to:flightID:)``). With the `sighting` of `key` a look returned, the flight is
    /// found without hashing the key when no flight was added or removed since.
    mutating func join(
        _ waiter: Waiter, id waiterID: UInt64, tag: UInt64, for key: Key, at sighting: Sighting? = nil,
        isCancelled: Bool, deadline: JoinDeadline?
    ) -> (registration: Registration, attribution: Attribution?, timer: Duration?)? {
        if isCancelled { return (.cancelled, nil, nil) }
        guard let index = index(of: key, at: sighting) else { return nil }
        waiting += 1
        let (registration, attribution) = Self.join(
            &flights.values[index], waiter, id: waiterID, tag: tag, spare: &spares.joiners)
        guard let deadline else { return (registration, attribution, nil) }
        let timer = Self.addDeadline(deadline, of: waiterID, to: &flights.values[index], spare: &spares.deadlines)
        return (registration, attribution, timer)
    }

    /// Adds a joiner's deadline to `flight`'s bounds, changed in place: at the end of ``Bounds/joined`` when the joiner
    /// started no earlier than the last one there and has its bound, else to the heap. Returns the time the flight's
    /// timer must be set to, as ``addDeadline(_:_:to:flightID:)`` does.
    private static func addDeadline(
        _ deadline: JoinDeadline, of waiterID: UInt64, to flight: inout Flight, spare: inout [JoinedDeadline]
    ) -> Duration? {
        if flight.bounds == nil { flight.bounds = Bounds() }
        let entry = JoinedDeadline(deadline: deadline, waiterID: waiterID)
        guard let last = flight.bounds?.joined.last?.deadline else {
            if flight.bounds?.joined.capacity == 0 { swap(&flight.bounds!.joined, &spare) }
            flight.bounds?.joined.append(entry)
            return timerTarget(for: deadline.at, of: flight)
        }
        // Compared as attoseconds: `Duration`'s operators are calls into the standard library.
        if deadline.start.attosecondCount >= last.start.attosecondCount,
            deadline.limit.attosecondCount == last.limit.attosecondCount
        {
            // No earlier than `last`, which the timer fires for or before: the timer stays as it is.
            flight.bounds?.joined.append(entry)
            return nil
        }
        let at = deadline.at
        flight.bounds?.deadlines.push(at, WaiterDeadline(waiterID: waiterID, limit: deadline.limit, error: nil))
        return timerTarget(for: at, of: flight)
    }

    /// `at` when the flight's timer must move to it: it has none, or one that fires later.
    private static func timerTarget(for at: Duration, of flight: Flight) -> Duration? {
        if let timer = flight.bounds?.timer, timer.at.attosecondCount <= at.attosecondCount { return nil }
        return at
    }

    /// The index of the flight for `key`: the sighted one while the table's layout is unchanged, else looked up.
    private func index(of key: Key, at sighting: Sighting?) -> [Key: Flight].Index? {
        guard let sighting, sighting.layout == layout else { return flights.index(forKey: key) }
        assert(flights.keys[sighting.index] == key, "a sighting of another key")
        return sighting.index
    }

    /// The id of the flight at `index`, read in place: a read through `flights.values` copies the whole flight.
    private mutating func id(at index: [Key: Flight].Index) -> UInt64 {
        Self.id(of: &flights.values[index])
    }

    private static func id(of flight: inout Flight) -> UInt64 { flight.id }

    private static func note(of flight: inout Flight) -> UInt64 { flight.note }

    /// Adds a joiner to `flight`, in one access to the flight: each read of a field through the dictionary's values
    /// would copy the whole flight.
    private static func join(
        _ flight: inout Flight, _ waiter: Waiter, id waiterID: UInt64, tag: UInt64, spare: inout [Waiters.Joiner]
    ) -> (Registration, Attribution?) {
        flight.waiters.add(waiter, id: waiterID, tag: tag, spare: &spare)
        let joined = Registration.joined(flightID: flight.id)
        // A flight that everyone left and that goes on (``AbandonmentPolicy/finish``) belongs to its next caller.
        guard flight.owner == nil else { return (joined, nil) }
        return (joined, attribute(&flight, to: tag))
    }

    /// Moves the flight's events to a caller still waiting when the one they belonged to, tagged `leaving`, is gone.
    private static func reattribute(_ flight: inout Flight, leaving: UInt64) -> Attribution? {
        guard flight.owner == leaving else { return nil }
        return attribute(&flight, to: flight.waiters.anyTag)
    }

    private static func attribute(_ flight: inout Flight, to owner: UInt64?) -> Attribution? {
        flight.owner = owner
        flight.ownerChanges += 1
        guard let target = flight.attributing else { return nil }
        return Attribution(target: target, owner: owner, generation: flight.ownerChanges)
    }

    /// Keeps the task of the flight `flightID`, started by its leader after ``register(_:id:for:isCancelled:)``.
    /// Returns `false` when the flight is no longer in the table: it either reported its outcome already (its
    /// operation never suspended) or every waiter left it first; the leader then cancels the task, which is harmless
    /// in the first case and stops work nobody waits for in the second.
    mutating func attach(_ task: FlightTask, to key: Key, flightID: UInt64) -> Bool {
        guard let index = flights.index(forKey: key), id(at: index) == flightID else { return false }
        flights.values[index].task = task
        return true
    }

    /// Removes the flight if it is still the one that reported, and hands back its waiters to resume, with its timer
    /// entry, which is the caller's to cancel.
    mutating func finish(_ key: Key, flightID: UInt64) -> (waiters: Waiters, timer: Timer?)? {
        reportedOutcomes += 1
        // An abandoned flight was removed when its last waiter left, and the key may now belong to a newer flight:
        // only the flight that is still in the table may remove the entry or resolve its waiters.
        guard let index = flights.index(forKey: key), id(at: index) == flightID else { return nil }
        flightRemoved()
        var flight = flights.remove(at: index).value
        waiting -= flight.waiters.count
        if flight.bounds != nil { Spares.keep(flight.bounds!.takeJoined(), in: &spares.deadlines) }
        // The waiters are handed back as they are stored: copying them into an array would allocate once per flight.
        return (flight.waiters, flight.bounds?.timer)
    }

    /// Adds a waiter's deadline to its flight, which the caller has just registered the waiter on (or attached its
    /// task to) under the same lock, so the flight is in the table. Returns the time the flight's timer must be set
    /// to when this deadline comes before the timer set (or none is); `nil` when the timer already fires in time.
    ///
    /// A joiner's bound is added by ``join(_:id:tag:for:isCancelled:deadline:)`` in the access that adds the joiner.
    mutating func addDeadline(_ at: Duration, _ deadline: WaiterDeadline, to key: Key, flightID: UInt64)
        -> Duration?
    {
        guard let index = flights.index(forKey: key), id(at: index) == flightID else {
            assertionFailure("a deadline for a flight that is not in the table")
            return nil
        }
        return Self.addDeadline(at, deadline, to: &flights.values[index])
    }

    /// Adds a deadline to `flight`'s bounds, changed in place.
    private static func addDeadline(_ at: Duration, _ deadline: WaiterDeadline, to flight: inout Flight) -> Duration? {
        if flight.bounds == nil { flight.bounds = Bounds() }
        flight.bounds?.deadlines.push(at, deadline)
        if let timer = flight.bounds?.timer, timer.at <= at { return nil }
        return at
    }

    /// Keeps the timer entry just set for the flight. Returns the entry it replaces, to cancel; `timer` itself when
    /// the flight is gone.
    mutating func setTimer(_ timer: Timer, for key: Key, flightID: UInt64) -> Timer? {
        guard let index = flights.index(forKey: key), id(at: index) == flightID,
            flights.values[index].bounds != nil
        else { return timer }
        let replaced = flights.values[index].bounds?.timer
        flights.values[index].bounds?.timer = timer
        return replaced
    }

    /// Called when the flight's timer fired: takes out the waiters whose deadline passed by `now`. A joiner leaves with
    /// `joinTimeout` (its coalescer's error, see ``JoinTimeouts``), given its bound.
    mutating func expire(
        _ key: Key, flightID: UInt64, now: Duration, policy: AbandonmentPolicy,
        joinTimeout: (Duration) -> any Error
    ) -> Expiry {
        var expiry = Expiry()
        guard let index = flights.index(forKey: key), id(at: index) == flightID,
            var flightBounds = flights.values[index].bounds
        else { return expiry }
        // Taken out, so that the heap below is changed in place rather than copied.
        flights.values[index].bounds = nil
        flightBounds.timer = nil
        while let top = flightBounds.deadlines.peek() {
            let deadline = top.payload
            let isWaiting = flights.values[index].waiters.contains(deadline.waiterID)
            guard top.deadline <= now || !isWaiting else { break }
            flightBounds.deadlines.pop()
            if isWaiting, let (waiter, tag) = flights.values[index].waiters.remove(deadline.waiterID) {
                waiting -= 1
                expiry.expired.append((waiter, deadline.error?(deadline.limit) ?? joinTimeout(deadline.limit)))
                if let attribution = Self.reattribute(&flights.values[index], leaving: tag) {
                    expiry.attribution = attribution
                }
            }
        }
        // The joiners' deadlines in order, from the earliest, as the heap's above.
        while flightBounds.joinedHead < flightBounds.joined.count {
            let joined = flightBounds.joined[flightBounds.joinedHead]
            let isWaiting = flights.values[index].waiters.contains(joined.waiterID)
            guard joined.deadline.at <= now || !isWaiting else { break }
            flightBounds.joinedHead += 1
            if isWaiting, let (waiter, tag) = flights.values[index].waiters.remove(joined.waiterID) {
                waiting -= 1
                expiry.expired.append((waiter, joinTimeout(joined.deadline.limit)))
                if let attribution = Self.reattribute(&flights.values[index], leaving: tag) {
                    expiry.attribution = attribution
                }
            }
        }
        if flightBounds.joinedHead == flightBounds.joined.count {
            flightBounds.joined.removeAll(keepingCapacity: true)
            flightBounds.joinedHead = 0
        }
        if policy == .cancel, flights.values[index].waiters.isEmpty {
            flightRemoved()
            expiry.abandoned = flights.remove(at: index).value.task
            return expiry
        }
        expiry.next = flightBounds.earliest
        flights.values[index].bounds = flightBounds
        return expiry
    }

    /// Withdraws a cancelled waiter. Returns the waiter to resume (nil if it was resumed already) and the task to
    /// cancel when it was the last waiter and the policy says so.
    mutating func leave(
        _ key: Key, waiterID: UInt64, policy: AbandonmentPolicy
    ) -> (waiter: Waiter?, abandoned: FlightTask?, timer: Timer?, attribution: Attribution?) {
        // Waiter ids are unique across flights, so a miss means the waiter was already resumed (its flight ended)
        // or never registered (it saw its cancellation first): nothing to do, never resume twice.
        guard let index = flights.index(forKey: key), let (waiter, tag) = flights.values[index].waiters.remove(waiterID)
        else { return (nil, nil, nil, nil) }
        waiting -= 1
        let attribution = Self.reattribute(&flights.values[index], leaving: tag)
        guard policy == .cancel, flights.values[index].waiters.isEmpty else {
            // Deadlines of waiters that left are dropped once they outnumber the waiters, so a long flight that many
            // callers join and leave keeps its heap the size of the callers still waiting.
            if let deadlines = flights.values[index].bounds?.count, deadlines > Self.compactionFloor,
                deadlines > 2 * flights.values[index].waiters.count
            {
                let waiters = flights.values[index].waiters
                flights.values[index].bounds?.keep { waiters.contains($0) }
            }
            return (waiter, nil, nil, attribution)
        }
        // Remove before cancelling so a caller arriving next starts a fresh flight instead of joining a dying one.
        flightRemoved()
        let flight = flights.remove(at: index).value
        return (waiter, flight.task, flight.bounds?.timer, attribution)
    }

    /// Below this many deadlines a flight's heap is never compacted.
    static var compactionFloor: Int { 64 }

    /// The room the spare storage has, for joiners and for their deadlines (for tests).
    var spareCapacities: (joiners: Int, deadlines: Int) { (spares.joiners.capacity, spares.deadlines.capacity) }

    /// Keeps the storage of a finished flight's joiners, once they were resumed, for the next flight (``spares``).
    mutating func recycle(_ joiners: consuming [Waiters.Joiner]) {
        Spares.keep(joiners, in: &spares.joiners)
    }

    /// Empty storage for the next flight's joiners and their deadlines (``FlightTable/spares``): the larger of what the
    /// last flights left, up to ``limit`` entries, so that a coalescer holds at most about 260 KB that way.
    struct Spares {
        var joiners: [Waiters.Joiner] = []
        var deadlines: [JoinedDeadline] = []

        static var limit: Int { 4_096 }

        /// Keeps `kept`, empty, as `spare` when it has more room than `spare` and no more than ``limit``.
        static func keep<Entry>(_ kept: consuming [Entry], in spare: inout [Entry]) {
            assert(kept.isEmpty, "spare storage with entries in it")
            guard kept.capacity > spare.capacity, kept.capacity <= limit else { return }
            spare = kept
        }
    }
}

/// How many flights a ``FlightTable`` holds, readable without the table's lock: most calls find no flight in the air, and
/// a look that reads `0` here returns at once instead of taking the lock. A count read while a flight is being added
/// may be stale; a caller that misses a flight that way leads its own call and joins the flight when it registers
/// (``RequestCoalescer/run(_:tag:operation:)`` joins a flight it finds).
final class FlightCensus: Sendable {
    /// Changed under the table's lock, read without it.
    let flights = Atomic<Int>(0)
}
