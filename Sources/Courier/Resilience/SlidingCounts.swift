/// Two counts over a sliding window, kept in ten slots of a tenth of the window each, on a ring: the retry budget's
/// deposits and withdrawals, the circuit breaker's successes and failures. A plain value; its owner holds the lock.
struct SlidingCounts: Sendable {
    static let slotCount = 10

    private struct Slot {
        var index: Int64 = -1
        var first = 0
        var second = 0
    }

    private let slotWidth: Int64
    private var slots = [Slot](repeating: Slot(), count: slotCount)

    /// Counts over `window`, to the nanosecond.
    init(window: Duration) {
        slotWidth = max(1, window.nanoseconds / Int64(Self.slotCount))
    }

    /// The slot `time` falls in.
    func slotIndex(_ time: Duration) -> Int64 {
        max(.zero, time).nanoseconds / slotWidth
    }

    /// Adds to the counts of slot `index`, emptying it first when it still holds an older round of the ring.
    mutating func add(first: Int = 0, second: Int = 0, inSlot index: Int64) {
        let position = Int(index % Int64(Self.slotCount))
        if slots[position].index != index { slots[position] = Slot(index: index) }
        slots[position].first += first
        slots[position].second += second
    }

    /// The counts of the window that ends with the slot of `now`.
    func totals(now: Duration) -> (first: Int, second: Int) {
        let current = slotIndex(now)
        var totals = (first: 0, second: 0)
        for slot in slots where slot.index > current - Int64(Self.slotCount) && slot.index <= current {
            totals.first += slot.first
            totals.second += slot.second
        }
        return totals
    }
}
