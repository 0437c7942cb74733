/// One host's slots and waiters in a ``ConnectionGate``, as a plain value: how many requests are inside URLSession
/// and which wait, in arrival order.
///
/// Every method is a short critical section run under the gate's lock; none starts a request. Each returns what must
/// happen, and the gate does it after the lock is released (a granted `Start` runs on the thread that freed the slot).
///
/// ## The rule for a waiter that leaves while it is granted a slot
///
/// A waiter is in exactly one place: queued here, or granted (its `Start` handed out by ``release()``). Granting takes
/// it out of the queue in the same critical section, so a ``withdraw(_:)`` that comes later finds nothing
/// (``WithdrawAction/notQueued``) and the slot is the granted request's: its start must find its caller gone and give
/// the slot back with one more ``release()`` (``URLSessionExchange/start(_:)`` does, by reporting `finished`). A
/// withdrawal that comes first removes it, and the slot goes to the next waiter.
///
/// Waiters are found by id (a cancelled one leaves in O(1)); `order` keeps arrival order. The id of a waiter that
/// left stays in `order` until it is skipped or compacted away: `order` is emptied when the last waiter leaves and
/// compacted once such ids outnumber the waiters, so it stays proportional to the waiters however many callers time
/// out or cancel while every slot is held.
struct ConnectionGateStateMachine<Start> {
    /// Below this many departed ids, `order` is not compacted (compacting a short array saves nothing).
    static var departedSlack: Int { 32 }

    /// Requests holding a slot (inside URLSession, or granted and about to start).
    private(set) var admitted = 0
    private var waiters: [UInt64: Start] = [:]
    private var order: [UInt64] = []
    private var head = 0

    /// Whether the host holds nothing: its entry can be dropped.
    var isIdle: Bool { admitted == 0 && waiters.isEmpty }

    /// Requests queued for a slot.
    var queued: Int { waiters.count }

    /// Entries in the arrival order, withdrawn ones included.
    var arrivalOrderCount: Int { order.count - head }

    /// What to do with a request that asks for a slot.
    enum AdmitAction: Equatable {
        /// It holds a slot now: the caller starts it.
        case startNow
        /// It waits; its start runs when a ``release()`` grants it a slot.
        case queued
    }

    /// Request `id` asks for a slot, under `limit`; `start` is kept when it must wait. A request never jumps the queue.
    mutating func admit(_ id: UInt64, _ start: Start, limit: Int) -> AdmitAction {
        if admitted < limit, waiters.isEmpty {
            admitted += 1
            return .startNow
        }
        waiters[id] = start
        order.append(id)
        return .queued
    }

    /// How a withdrawal went.
    enum WithdrawAction: Equatable {
        /// It was queued and is gone: its start will never run.
        case withdrawn
        /// It was not queued: already granted (it holds the slot until it releases it) or never queued.
        case notQueued
    }

    /// Request `id` leaves the queue because its caller left.
    mutating func withdraw(_ id: UInt64) -> WithdrawAction {
        guard waiters.removeValue(forKey: id) != nil else { return .notQueued }
        dropDeparted()
        return .withdrawn
    }

    /// What to do with a slot given back.
    enum ReleaseAction {
        /// Run `start`: the longest-waiting request takes over the slot.
        case start(Start)
        /// Nothing: no request waits, and the slot is free.
        case freed
    }

    /// A request gives its slot back.
    mutating func release() -> ReleaseAction {
        while head < order.count {
            let id = order[head]
            head += 1
            if let next = waiters.removeValue(forKey: id) {
                compact()
                return .start(next)
            }
        }
        order.removeAll(keepingCapacity: true)
        head = 0
        admitted = max(0, admitted - 1)
        return .freed
    }

    /// Forgets the ids of waiters that left: all of them when none waits any more, else once they outnumber the
    /// waiters (amortized O(1) a departure).
    private mutating func dropDeparted() {
        guard !waiters.isEmpty else {
            order.removeAll(keepingCapacity: true)
            head = 0
            return
        }
        let departed = order.count - head - waiters.count
        guard departed > max(waiters.count, Self.departedSlack) else { return }
        order = order[head...].filter { waiters[$0] != nil }
        head = 0
    }

    /// Drops the consumed front of `order` once it is at least half of it, so the array stays O(waiters).
    private mutating func compact() {
        guard head >= 64, head * 2 >= order.count else { return }
        order.removeFirst(head)
        head = 0
    }
}

extension ConnectionGateStateMachine: Sendable where Start: Sendable {}
