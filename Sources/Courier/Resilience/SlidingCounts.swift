/// Two counts over a sliding window, kept in slots of equal width on a ring: the retry budget's deposits and
/// withdrawals, the circuit breaker's successes and failures. A plain value; its owner holds the lock.
struct SlidingCounts: Sendable {
    /// How many slots the window is cut into: the window a total covers is between `slotCount - 1` and `slotCount`
    /// slots long.
    let slotCount: Int

    private struct Slot {
        var index: Int64 = -1
        var first = 0
        var second = 0
    }

    /// How long one slot lasts, in nanoseconds.
    let slotWidth: Int64
    private var slots: [Slot]

    /// Counts over `window`, in `slotCount` slots (at least 1).
    init(window: Duration, slotCount: Int = 10) {
        self.slotCount = max(1, slotCount)
        slotWidth = max(1, window.nanoseconds / Int64(self.slotCount))
        slots = [Slot](repeating: Slot(), count: self.slotCount)
    }

    /// The slot `time` falls in.
    func slotIndex(_ time: Duration) -> Int64 {
        max(.zero, time).nanoseconds / slotWidth
    }

    /// Adds to the counts of slot `index`, emptying it first when it still holds an older round of the ring.
    mutating func add(first: Int = 0, second: Int = 0, inSlot index: Int64) {
        let position = Int(index % Int64(slotCount))
        if slots[position].index != index { slots[position] = Slot(index: index) }
        slots[position].first += first
        slots[position].second += second
    }

    /// The counts of the window that ends with the slot of `now`.
    func totals(now: Duration) -> (first: Int, second: Int) {
        let current = slotIndex(now)
        var totals = (first: 0, second: 0)
        for slot in slots where slot.index > current - Int64(slotCount) && slot.index <= current {
            totals.first += slot.first
            totals.second += slot.second
        }
        return totals
    }
}
