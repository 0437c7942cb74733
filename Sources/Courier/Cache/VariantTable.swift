/// The slots of the variants stored for each URL, in a hash table of its own: open addressing with linear probing,
/// keyed by ``URLText``, whose hash was computed once when the client built the URL.
///
/// A `Dictionary` hashed each key again through `Hasher` on every lookup, insertion and removal, and a removal moved the
/// entries after it in their probe run, hashing each of them again: about 1,000 instructions of every response stored
/// with an eviction (a lookup that misses, a store, an evicted URL). Here a key's hash is read, never computed, and a
/// removal shifts the entries after it back by their kept hashes (no tombstones), so a table that is filled and emptied
/// for ever (a cache of ever-new URLs) never degrades.
///
/// Kept at most half full; ``VariantIndex`` gives it room for a full cache up front.
///
/// The buckets are one array of mark, URL and slots: as three arrays, each write to a bucket checked three arrays'
/// uniqueness and bounds, and a removal swapped two arrays' elements (about 150 instructions of an eviction).
struct VariantTable {
    private struct Bucket {
        /// The hash of the URL held (never `0`, see ``mark(of:)``), or `0` when the bucket is empty. Probing reads
        /// the marks; a URL is compared only where its hash matches.
        var mark: Int
        /// The URL held, or ``VariantTable/vacantURL``.
        var url: URLText
        /// The URL's slots, or none.
        var slots: VariantSlots
    }

    private var buckets: [Bucket]
    /// What an empty bucket holds as its URL (never compared: its mark is `0`).
    private let vacantURL = URLText("")
    /// Number of URLs held.
    private(set) var count = 0

    /// A table with room for `urls` URLs before it grows.
    init(room urls: Int = 0) {
        var capacity = 16
        while capacity < 2 * urls { capacity *= 2 }
        buckets = Array(repeating: Bucket(mark: 0, url: vacantURL, slots: VariantSlots()), count: capacity)
    }

    private var vacantBucket: Bucket { Bucket(mark: 0, url: vacantURL, slots: VariantSlots()) }

    var isEmpty: Bool { count == 0 }

    /// How many buckets the table has: it holds half as many URLs before it grows.
    var capacity: Int { buckets.count }

    /// The slots stored for `url`.
    subscript(url: URLText) -> VariantSlots? {
        guard case .found(let index) = find(url) else { return nil }
        return buckets[index].slots
    }

    /// The URLs held, in no particular order.
    var urls: [URLText] { buckets.filter { $0.mark != 0 }.map(\.url) }

    /// The slot lists held, in no particular order.
    var allSlots: [VariantSlots] { buckets.filter { $0.mark != 0 }.map(\.slots) }

    /// Calls `body` with the slots stored for `url` (empty when there are none), in one lookup, then keeps what it
    /// leaves: the URL is added when it had none and now has some, removed when it is left with none.
    mutating func modify<Result>(_ url: URLText, _ body: (inout VariantSlots) -> Result) -> Result {
        switch find(url) {
        case .found(let index):
            let result = body(&buckets[index].slots)
            if buckets[index].slots.isEmpty { remove(at: index) }
            return result
        case .vacant(let index):
            var slots = VariantSlots()
            let result = body(&slots)
            guard !slots.isEmpty else { return result }
            if 2 * (count + 1) > capacity {
                grow()
                insert(url, slots)
            } else {
                put(url, slots, at: index)
            }
            return result
        }
    }

    // MARK: Probing

    private enum Probe {
        case found(Int)
        /// Where `url` would go.
        case vacant(Int)
    }

    private var mask: Int { buckets.count - 1 }

    /// What a bucket holding `url` is marked with: its hash, moved off `0`, which marks an empty bucket.
    private static func mark(of url: URLText) -> Int {
        url.precomputedHash == 0 ? 1 : url.precomputedHash
    }

    private func find(_ url: URLText) -> Probe {
        let mark = Self.mark(of: url)
        var index = mark & mask
        while buckets[index].mark != 0 {
            if buckets[index].mark == mark, buckets[index].url == url { return .found(index) }
            index = (index + 1) & mask
        }
        return .vacant(index)
    }

    private mutating func put(_ url: URLText, _ slots: VariantSlots, at index: Int) {
        buckets[index] = Bucket(mark: Self.mark(of: url), url: url, slots: slots)
        count += 1
    }

    /// Puts a URL not held yet; the table has room.
    private mutating func insert(_ url: URLText, _ slots: VariantSlots) {
        var index = Self.mark(of: url) & mask
        while buckets[index].mark != 0 { index = (index + 1) & mask }
        put(url, slots, at: index)
    }

    /// Empties `index`, then moves back each bucket after it in the probe run that may take the hole: one whose home
    /// is not cyclically in `(hole, next]`, so that every URL stays reachable from its home without tombstones. Moved
    /// by swapping, so that no URL or list is retained or released.
    private mutating func remove(at index: Int) {
        var hole = index
        var next = (index + 1) & mask
        while buckets[next].mark != 0 {
            let home = buckets[next].mark & mask
            let staysPut = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
            if !staysPut {
                buckets.swapAt(hole, next)
                hole = next
            }
            next = (next + 1) & mask
        }
        buckets[hole] = vacantBucket
        count -= 1
    }

    private mutating func grow() {
        let old = buckets
        buckets = Array(repeating: vacantBucket, count: old.count * 2)
        count = 0
        for bucket in old where bucket.mark != 0 { insert(bucket.url, bucket.slots) }
    }
}
