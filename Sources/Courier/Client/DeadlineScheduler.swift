/// One timer for every deadline of a client.
///
/// A sleep on a clock that is cancelled early still leaves its timer queued until the time it was set for (on
/// Linux, a dispatch timer per sleep). With one timer per attempt and a 60-second default deadline, a busy client
/// kept every finished attempt's timer alive for a minute: 50,000 quick requests held about 37 MB. The scheduler
/// instead keeps the deadlines in a heap and runs one timer task that sleeps until the earliest; an attempt that
/// ends just removes its entry. A new timer replaces the running one only when a deadline earlier than the
/// timer's target arrives, which a client whose attempts share one timeout never does.
///
/// Deadlines saturate (see `Duration.saturationLimit`): a timeout of `.seconds(Int64.max)` is a deadline that never
/// arrives, not a trap in the timer task. An attempt that ends early leaves a dead entry in the heap; once the dead
/// outnumber the live, the heap is rebuilt from the live entries, so its size follows the deadlines pending, not the
/// request rate times the timeout.
final class DeadlineScheduler: Sendable {
    private struct Entry {
        let deadline: Duration
        let fire: @Sendable () -> Void
    }

    private struct State {
        /// The pending entries by slot, freed slots reused: an entry's id is its slot and the slot's use count, so
        /// scheduling and cancelling index an array instead of hashing into a dictionary (every attempt does both).
        var entries = EntrySlots()
        /// Deadlines in time order. Entries removed by `cancel` stay until they reach the top (lazy deletion) or
        /// until they make up half the heap, when `cancel` compacts it.
        var heap = DeadlineHeap<UInt64>()
        /// The running timer: its generation and the time it sleeps until.
        var timer: (generation: UInt64, target: Duration, task: Task<Void, Never>)?
        var generations: UInt64 = 0
    }

    /// Pending entries in reusable slots. An id holds the slot in its low 32 bits and the slot's use count in its
    /// high 32 bits, so an id whose entry fired or was cancelled never matches the slot's next entry.
    private struct EntrySlots {
        private var slots: [(uses: UInt64, entry: Entry?)] = []
        private var free: [Int] = []
        private(set) var count = 0

        mutating func insert(_ entry: Entry) -> UInt64 {
            let slot: Int
            if let reused = free.popLast() {
                slot = reused
            } else {
                slot = slots.count
                slots.append((0, nil))
            }
            slots[slot].uses &+= 1
            slots[slot].entry = entry
            count += 1
            return (slots[slot].uses & 0xFFFF_FFFF) << 32 | UInt64(slot)
        }

        func contains(_ id: UInt64) -> Bool {
            guard let slot = Self.slot(of: id, in: slots) else { return false }
            return slots[slot].entry != nil
        }

        mutating func remove(_ id: UInt64) -> Entry? {
            guard let slot = Self.slot(of: id, in: slots), let entry = slots[slot].entry else { return nil }
            slots[slot].entry = nil
            free.append(slot)
            count -= 1
            return entry
        }

        private static func slot(of id: UInt64, in slots: [(uses: UInt64, entry: Entry?)]) -> Int? {
            let slot = Int(id & 0xFFFF_FFFF)
            guard slot < slots.count, slots[slot].uses & 0xFFFF_FFFF == id >> 32 else { return nil }
            return slot
        }
    }

    private let clock: any Clock<Duration>
    private let stopwatch: Stopwatch
    private let state = Locked(State())

    /// - Parameters:
    ///   - clock: The clock the timer sleeps on.
    ///   - stopwatch: The time deadlines are measured in, read on `clock`; a new one by default. A client shares its
    ///     event log's, so that a time read for an event also places a deadline.
    init(clock: any Clock<Duration>, stopwatch: Stopwatch? = nil) {
        self.clock = clock
        self.stopwatch = stopwatch ?? Stopwatch(clock: clock)
    }

    /// Calls `fire` once `delay` has passed on the clock, unless ``cancel(_:)`` comes first. Returns the entry's id.
    func schedule(after delay: Duration, _ fire: @escaping @Sendable () -> Void) -> UInt64 {
        schedule(at: stopwatch.elapsed.saturatingAdding(delay), fire)
    }

    /// Calls `fire` once ``elapsed`` reaches `deadline`, unless ``cancel(_:)`` comes first. Returns the entry's id.
    func schedule(at deadline: Duration, _ fire: @escaping @Sendable () -> Void) -> UInt64 {
        let (id, replaced) = state.withLock { state -> (UInt64, Task<Void, Never>?) in
            let id = state.entries.insert(Entry(deadline: deadline, fire: fire))
            state.heap.push(deadline, id)
            if let timer = state.timer, timer.target <= deadline { return (id, nil) }
            let replaced = state.timer?.task
            startTimer(&state, target: deadline)
            return (id, replaced)
        }
        replaced?.cancel()
        return id
    }

    /// Time elapsed on the clock since the scheduler was made: what deadlines are measured against.
    var elapsed: Duration { stopwatch.elapsed }

    /// Forgets an entry; it will not fire.
    ///
    /// Compacting when the dead entries exceed half the heap costs O(live) once per O(live) cancellations: amortized
    /// O(1) per cancellation, with a floor so that a nearly idle client never rebuilds.
    func cancel(_ id: UInt64) {
        state.withLock { state in
            guard state.entries.remove(id) != nil else { return }
            let dead = state.heap.count - state.entries.count
            guard dead > Self.compactionFloor, dead > state.heap.count / 2 else { return }
            state.heap.removeAll { [entries = state.entries] in !entries.contains($0) }
        }
    }

    /// Below this many dead entries the heap is never compacted: popping them as they reach the top is cheaper.
    static let compactionFloor = 64

    /// Number of entries waiting to fire (for tests).
    var pendingCount: Int { state.withLock { $0.entries.count } }

    /// Number of entries in the heap, dead ones included (for tests).
    var heapCount: Int { state.withLock { $0.heap.count } }

    private func startTimer(_ state: inout State, target: Duration) {
        state.generations &+= 1
        let generation = state.generations
        let task = Task { [self] in await runTimer(generation: generation, target: target) }
        state.timer = (generation, target, task)
    }

    /// Sleeps until `target`, fires what is due, and goes on to the next deadline; ends when no entry is left
    /// or a newer timer replaced it.
    private func runTimer(generation: UInt64, target: Duration) async {
        var target = target
        while true {
            do {
                try await clock.sleep(for: target - stopwatch.elapsed)
            } catch {
                return  // cancelled: a timer with an earlier target took over
            }
            let (due, next) = takeDue(at: stopwatch.elapsed, timer: generation)
            for entry in due { entry.fire() }
            guard let next else { return }
            target = next
        }
    }

    /// Takes the entries due at `now` off the heap, in deadline order, and returns them with the deadline to sleep
    /// until next. They fire after the lock is released, so anything can happen between an entry's removal and its
    /// call: what each entry's action checks for (see ``IdleTimeoutStateMachine``).
    ///
    /// - Parameter generation: The timer taking the batch: a timer that was replaced takes nothing, and the last
    ///   entry taken ends the timer. `nil` for a caller that is not the timer (a test that fires a batch by hand),
    ///   which leaves the timer sleeping as it was.
    private func takeDue(at now: Duration, timer generation: UInt64?) -> (due: [Entry], next: Duration?) {
        state.withLock { state in
            if let generation, state.timer?.generation != generation { return ([], nil) }
            var due: [Entry] = []
            while let top = state.heap.peek(), top.deadline <= now {
                state.heap.pop()
                if let entry = state.entries.remove(top.payload) { due.append(entry) }
            }
            while let top = state.heap.peek(), !state.entries.contains(top.payload) { state.heap.pop() }
            guard generation != nil else { return (due, nil) }
            guard let next = state.heap.peek()?.deadline else {
                state.timer = nil
                return (due, nil)
            }
            state.timer?.target = next
            return (due, next)
        }
    }

    /// Takes the entries due at `now` off the heap as the timer does, and returns their actions unfired (for tests:
    /// what happens between the two, which the timer leaves to chance, a test makes happen).
    func takeDue(at now: Duration) -> [@Sendable () -> Void] {
        takeDue(at: now, timer: nil).due.map(\.fire)
    }
}

/// A binary min-heap of deadlines, each with what it belongs to (the scheduler's entry id; a coalescer's waiter).
struct DeadlineHeap<Payload: Sendable>: Sendable {
    private var items: [(deadline: Duration, payload: Payload)] = []

    var count: Int { items.count }

    func peek() -> (deadline: Duration, payload: Payload)? { items.first }

    /// Removes every item whose payload `isDead`, then restores the heap order bottom-up in O(n).
    mutating func removeAll(where isDead: (Payload) -> Bool) {
        items.removeAll { isDead($0.payload) }
        for parent in stride(from: items.count / 2 - 1, through: 0, by: -1) { siftDown(from: parent) }
    }

    mutating func push(_ deadline: Duration, _ payload: Payload) {
        items.append((deadline, payload))
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].deadline < items[parent].deadline else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() {
        guard !items.isEmpty else { return }
        items.swapAt(0, items.count - 1)
        items.removeLast()
        siftDown(from: 0)
    }

    private mutating func siftDown(from index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < items.count, items[left].deadline < items[smallest].deadline { smallest = left }
            if right < items.count, items[right].deadline < items[smallest].deadline { smallest = right }
            guard smallest != parent else { return }
            items.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
