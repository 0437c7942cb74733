/// The order of the disk tier's writes and removals, as the memory tier saw them.
///
/// Memory changes under the cache's lock, the disk later, outside it, in each caller's task: without an order, a
/// write whose file is renamed after an invalidation removed its URL would put the invalidated body back on disk,
/// to be served as fresh once memory lets the entry go. Each change takes a ticket in the critical section that
/// changes memory, so tickets are in memory's order; a removal records its ticket per URL, and a write (or a
/// promotion) whose ticket is older than a removal of its URL is overtaken and dropped.
///
/// A removal's record matters only while an older ticket is still open, so the records are dropped when no ticket
/// is open, and pruned below the oldest open one when they pile up under a steady load.
struct DiskTickets {
    private var last: UInt64 = 0
    /// Tickets taken and not yet finished.
    private var open: Set<UInt64> = []
    /// URL → the ticket of its latest removal.
    private var removed: [String: UInt64] = [:]
    /// The ticket of the latest removal of everything.
    private var cleared: UInt64 = 0
    /// Prune `removed` when it grows past this.
    private var pruneAt = 256

    /// A ticket for a write or a promotion.
    mutating func reserve() -> UInt64 {
        last &+= 1
        open.insert(last)
        return last
    }

    /// A ticket for removing `urls`, or everything when `nil`; recorded at once, so that whatever holds an older
    /// ticket is overtaken from now on.
    mutating func reserve(removing urls: [String]?) -> UInt64 {
        let ticket = reserve()
        guard open.count > 1 else { return ticket }  // Nothing older is open: nothing to overtake.
        guard let urls else {
            cleared = ticket
            return ticket
        }
        for url in urls { removed[url] = ticket }
        return ticket
    }

    /// Whether a removal of `url` (or of everything) took its ticket after `ticket`.
    func isOvertaken(_ ticket: UInt64, url: String) -> Bool {
        cleared > ticket || (removed[url] ?? 0) > ticket
    }

    mutating func finish(_ ticket: UInt64) {
        open.remove(ticket)
        if open.isEmpty {
            removed = [:]
            cleared = 0
        } else if removed.count > pruneAt, let oldest = open.min() {
            removed = removed.filter { $0.value > oldest }
            pruneAt = max(256, removed.count * 2)
        }
    }
}
