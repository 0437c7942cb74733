import Foundation

/// Who a stored response belongs to (RFC 9111 §2: the cache key may include more than the URI).
///
/// The identity is what ``ResponseCache`` callers pass as `partition` (a user id, the credential's identity);
/// the credentials are the values of the header fields the request's ``CredentialPolicy`` names, in the request as
/// it was looked up (after adapters). Both take part, so two users never share a stored response even when no identity is given. The
/// values are compared, never printed.
struct CachePartition: Hashable, Sendable {
    let identity: String?
    let credentials: [String]

    init(identity: String?, request: TransportRequest) {
        self.identity = identity
        credentials = request.credentials.credentialLines(of: request.headers)
    }

    /// The SHA-256 of the identity and the credentials, as hexadecimal: how the disk tier names a partition, so
    /// that neither is ever written in the clear.
    var digest: String {
        var bytes: [UInt8] = identity.map { [1] + Array($0.utf8) } ?? [0]
        for line in credentials { bytes += [0] + Array(line.utf8) }
        return SHA256.hex(bytes)
    }
}

/// The storage behind ``ResponseCache``: a least-recently-used list bounded by entry count, by total bytes and by
/// the size of one entry. Every operation is O(1) apart from scanning the few variants stored for one URL and
/// partition.
///
/// Nodes live in an array and link to each other by index (a doubly linked list without reference counting), their
/// links in an array of their own; freed slots are reused. Lookup goes URL → partition → variant slots, so invalidating a URL finds every partition
/// and variant without scanning the cache. A plain value with no isolation of its own: the actor owns it.
struct CacheStorage {
    /// The bounds; see ``ResponseCache/init(maxEntries:maxBytes:maxEntryBytes:)``.
    struct Limits: Sendable, Hashable {
        var maxEntries: Int
        var maxBytes: Int
        var maxEntryBytes: Int
    }

    /// What `insert` did.
    struct Insertion: Equatable {
        /// Whether the entry is now stored (false when it exceeds `maxEntryBytes`).
        var stored: Bool
        /// Variants the new entry replaced.
        var replaced: Int
        /// Entries evicted, least recently used first, to get back under the limits.
        var evicted: Int
        /// The stored entry's generation (see ``CachedResponse/generation``); `0` when nothing was stored.
        var generation: UInt64 = 0
    }

    /// The most variants kept for one URL and partition: a server that varies on a per-request field
    /// (`Vary: X-Request-ID`) would otherwise fill the cache with variants that every lookup of that URL scans.
    static let maxVariants = 8

    /// A stored variant as a lookup sees it, to be matched outside the lock and then ``touch(_:)``ed.
    struct Candidate {
        let slot: Int
        let id: UInt64
        let entry: CachedResponse
    }

    private struct Node {
        /// Tells a slot's current entry from one stored there earlier.
        let id: UInt64
        /// The entry, once a lookup returned it; until then its fields are in ``unboxed`` (see
        /// ``insert(fields:byteCount:variesOnNothing:url:partition:replacing:)``).
        var entry: CachedResponse?
        /// The entry's ``CachedResponse/byteCount``, and whether it varies on nothing, read without the entry.
        let byteCount: Int
        let variesOnNothing: Bool
        let url: URLText
        let partition: CachePartition
        /// The body as a caller decoded it, and the bytes it counts (its body's length) against the limits.
        var decoded: DecodedValue?
        var decodedBytes = 0
        /// The response as last served, with its `Age`; see ``CachedResponse/Served``.
        var served: CachedResponse.Served?
    }

    /// A slot's place in the least-recently-used list.
    private struct Link {
        /// Toward the most recently used end.
        var newer: Int?
        /// Toward the least recently used end.
        var older: Int?
    }

    let limits: Limits
    private var slots: [Node?] = []
    /// The list's links, by slot: beside the nodes rather than in them, so that relinking a slot writes two integers
    /// where writing through an optional node cost about 50 instructions a field.
    private var links: [Link] = []
    /// The fields of each slot's entry until a lookup first returns it, by slot; `nil` once boxed (see
    /// ``insert(fields:byteCount:variesOnNothing:url:partition:replacing:)``).
    private var unboxed: [CachedResponse.Fields?] = []
    private var freeSlots: [Int] = []
    private var newest: Int?
    private var oldest: Int?
    /// URL → partition → slots of the stored variants, in the order they were stored.
    private var index = VariantIndex()
    private var lastNodeID: UInt64 = 0 {
        didSet { published.count.store(lastNodeID, ordering: .relaxed) }
    }
    /// How many entries were ever stored: every entry that is stored, in whatever way, takes the next node id.
    var insertions: UInt64 { lastNodeID }
    /// ``insertions``, for readers outside the cache's lock (``ResponseCache/countMiss(ifStill:)``).
    let published = PublishedInsertions()
    /// Number of stored entries.
    private(set) var count = 0
    /// Sum of ``CachedResponse/byteCount`` over the stored entries.
    private(set) var totalBytes = 0

    init(limits: Limits) {
        self.limits = limits
        index = VariantIndex(expecting: limits.maxEntries)
    }

    /// The stored variants for `url` and `partition`, most recently stored first: matching them against a request's
    /// headers (server-controlled work) happens outside the lock.
    mutating func candidates(url: URLText, partition: CachePartition) -> [Candidate] {
        guard let variants = index.slots(url: url, partition: partition) else { return [] }
        var candidates: [Candidate] = []
        for slot in variants.reversed() where slots[slot] != nil {
            candidates.append(Candidate(slot: slot, id: slots[slot].unsafelyUnwrapped.id, entry: entry(inSlot: slot)))
        }
        return candidates
    }

    /// The stored variant for `url` and `partition` when the newest one varies on nothing, marked as most recently
    /// used: it then answers every request, so the common lookup takes one critical section and builds no list.
    /// `.none` when nothing is stored; `.needsMatching` when the newest variant has a `Vary` to match against the
    /// request, which ``candidates(url:partition:)`` leaves to be done outside the lock.
    mutating func unvariedEntry(url: URLText, partition: CachePartition) -> UnvariedLookup {
        guard let slot = index.newestSlot(url: url, partition: partition), slots[slot] != nil else { return .none }
        // The node is read in place: copying it out would retain each of its fields.
        guard slots[slot].unsafelyUnwrapped.variesOnNothing else { return .needsMatching }
        if newest != slot {
            unlink(slot)
            linkAsNewest(slot)
        }
        return .entry(entry(inSlot: slot))
    }

    /// What ``unvariedEntry(url:partition:)`` found.
    enum UnvariedLookup {
        case none
        case needsMatching
        case entry(CachedResponse)
    }

    /// The entry stored in `slot` (which holds one) as a lookup returns it: with its generation, its slot and what
    /// is kept beside it. Boxed here, once, if no lookup returned it before (see
    /// ``insert(fields:byteCount:variesOnNothing:url:partition:replacing:)``).
    private mutating func entry(inSlot slot: Int) -> CachedResponse {
        if slots[slot].unsafelyUnwrapped.entry == nil { box(slot) }
        var entry = slots[slot].unsafelyUnwrapped.entry.unsafelyUnwrapped
        entry.generation = slots[slot].unsafelyUnwrapped.id
        entry.storageSlot = slot
        entry.decoded = slots[slot].unsafelyUnwrapped.decoded
        entry.lastServed = slots[slot].unsafelyUnwrapped.served
        return entry
    }

    /// Boxes the fields kept for `slot`, for the first lookup that returns its entry.
    @inline(never)
    private mutating func box(_ slot: Int) {
        guard let fields = unboxed[slot].take() else { return }
        slots[slot]?.entry = CachedResponse(fields: fields)
    }

    /// The entry in `slot`, boxed or not (not kept: for diagnostics and scans).
    private func anyEntry(inSlot slot: Int) -> CachedResponse? {
        if let entry = slots[slot]?.entry { return entry }
        return unboxed[slot].map { CachedResponse(fields: $0) }
    }

    /// Keeps the response as served at one age beside the entry stored in `slot`, if it is still generation `id`.
    mutating func keepServed(_ served: CachedResponse.Served, slot: Int, id: UInt64) {
        guard slots.indices.contains(slot), slots[slot]?.id == id else { return }
        slots[slot]?.served = served
    }

    /// The URLs with at least one stored entry.
    var urls: Set<String> { index.urls }

    /// Every stored entry with its URL, in no particular order (O(n)): to be filtered outside the lock.
    var allCandidates: [(url: String, candidate: Candidate)] {
        slots.indices.compactMap { slot in
            slots[slot].map { node in
                var entry = anyEntry(inSlot: slot).unsafelyUnwrapped
                entry.generation = node.id
                return (node.url.text, Candidate(slot: slot, id: node.id, entry: entry))
            }
        }
    }

    /// Whether `candidate` is still stored, as the same generation.
    func holds(_ candidate: Candidate) -> Bool {
        slots[candidate.slot]?.id == candidate.id
    }

    /// Removes a candidate, if it is still stored as the same generation.
    mutating func remove(_ candidate: Candidate) {
        guard holds(candidate) else { return }
        remove(candidate.slot)
    }

    /// Marks a candidate as most recently used, if it is still stored.
    mutating func touch(_ candidate: Candidate) {
        // The entry used last is often the one used now (a burst of calls for one URL): it stays where it is.
        guard newest != candidate.slot, holds(candidate) else { return }
        unlink(candidate.slot)
        linkAsNewest(candidate.slot)
    }

    /// Stores `entry` as the most recently used, replacing the variants that `headers` (the request it answers)
    /// would have selected, then evicts least recently used entries until the limits hold.
    mutating func insert(
        _ entry: CachedResponse, url: URLText, partition: CachePartition, replacing headers: HeaderFields
    ) -> Insertion {
        var none: CachedResponse.Fields?
        return insert(
            entry, orFields: &none, byteCount: entry.byteCount, variesOnNothing: entry.varyNames.isEmpty, url: url,
            partition: partition, replacing: headers)
    }

    /// ``insert(_:url:partition:replacing:)`` for an entry's fields, moved out of `fields` and kept as they are until a
    /// lookup first returns them, which boxes them once for every lookup after.
    ///
    /// A service that calls ever-new URLs stores responses that nobody asks for again: boxing each when it was stored
    /// cost an allocation per stored response, and its release at eviction. The fields are kept beside the nodes, not
    /// in them: a node is read on every hit, and with the fields inline each read copied them. They are a few hundred
    /// bytes, handed over in the optional they are moved out of, with their size and whether they vary read by the
    /// caller: wrapped in an enum and read through it, they were copied five times more on their way into storage (a
    /// `memcpy` of about 64 instructions each; `Docs/Benchmarks.md`, session 18).
    mutating func insert(
        fields: inout CachedResponse.Fields?, byteCount: Int, variesOnNothing: Bool, url: URLText,
        partition: CachePartition, replacing headers: HeaderFields
    ) -> Insertion {
        insert(
            nil, orFields: &fields, byteCount: byteCount, variesOnNothing: variesOnNothing, url: url,
            partition: partition, replacing: headers)
    }

    /// Stores `entry`, or else the fields moved out of `fields`.
    private mutating func insert(
        _ entry: CachedResponse?, orFields fields: inout CachedResponse.Fields?, byteCount: Int, variesOnNothing: Bool,
        url: URLText, partition: CachePartition, replacing headers: HeaderFields
    ) -> Insertion {
        let fits = limits.maxEntries > 0 && byteCount <= limits.maxEntryBytes && byteCount <= limits.maxBytes
        let stored = Stored(byteCount: byteCount, variesOnNothing: variesOnNothing, url: url, partition: partition)
        // A URL stored for the first time, the common case of a service calling distinct resources, has no variant to
        // replace or to make room among: the slot it takes is added to the index in the same lookup that finds that
        // nothing is stored for it (looking up, then adding, hashed and probed the index twice).
        let variants: VariantSlots?
        if fits {
            let slot = freeSlots.last ?? slots.count
            variants = index.addIfFirst(slot, url: url, partition: partition)
            if variants == nil { return place(entry, orFields: &fields, stored, inSlot: slot, replaced: 0) }
        } else {
            variants = index.slots(url: url, partition: partition)
        }
        var replaced = 0
        if let variants { replaced = removeVariants(variants, matching: headers) }
        guard fits else { return Insertion(stored: false, replaced: replaced, evicted: 0) }
        while let variants = index.slots(url: url, partition: partition), variants.count >= Self.maxVariants,
            let oldest = variants.first
        {
            remove(oldest)
            replaced += 1
        }
        let slot = freeSlots.last ?? slots.count
        index.append(slot, url: url, partition: partition)
        return place(entry, orFields: &fields, stored, inSlot: slot, replaced: replaced)
    }

    /// What a node records of the entry it holds, besides the entry.
    private struct Stored {
        let byteCount: Int
        let variesOnNothing: Bool
        let url: URLText
        let partition: CachePartition
    }

    /// Puts `entry` (or the fields moved out of `fields`) in `slot` (the last free slot, or the next new one), already
    /// indexed, as the most recently used, then evicts least recently used entries until the limits hold.
    private mutating func place(
        _ entry: CachedResponse?, orFields fields: inout CachedResponse.Fields?, _ stored: Stored, inSlot slot: Int,
        replaced: Int
    ) -> Insertion {
        let byteCount = stored.byteCount
        lastNodeID &+= 1
        // Built in place: a node built first and then stored was copied, each of its references retained and
        // released once more.
        if slot == slots.count {
            slots.append(nil)
            unboxed.append(nil)
            links.append(Link())
        } else {
            freeSlots.removeLast()
        }
        slots[slot] = Node(
            id: lastNodeID, entry: entry, byteCount: byteCount, variesOnNothing: stored.variesOnNothing,
            url: stored.url, partition: stored.partition)
        if fields != nil { swap(&unboxed[slot], &fields) }
        linkAsNewest(slot)
        count += 1
        totalBytes += byteCount
        var evicted = 0
        while count > limits.maxEntries || totalBytes > limits.maxBytes, let victim = oldest, victim != slot {
            remove(victim)
            evicted += 1
        }
        return Insertion(stored: true, replaced: replaced, evicted: evicted, generation: lastNodeID)
    }

    /// Keeps a decoded body beside the entry stored in `slot`, if it is still generation `id` and has none yet,
    /// counting `bytes` more against the limits (evicting least recently used entries if needed). Returns how many
    /// entries were evicted: 0 also when the value is not kept (the entry is gone, or would not fit with it).
    mutating func keepDecoded(_ value: DecodedValue, bytes: Int, slot: Int, id: UInt64) -> Int {
        guard slots.indices.contains(slot), let node = slots[slot], node.id == id, node.decoded == nil else {
            return 0
        }
        let total = node.byteCount + bytes
        guard total <= limits.maxEntryBytes, total <= limits.maxBytes else { return 0 }
        slots[slot]?.decoded = value
        slots[slot]?.decodedBytes = bytes
        totalBytes += bytes
        var evicted = 0
        while totalBytes > limits.maxBytes, let victim = oldest, victim != slot {
            remove(victim)
            evicted += 1
        }
        return evicted
    }

    /// Removes the variants for `url` and `partition` that `headers` select; returns how many.
    @discardableResult
    mutating func removeVariants(url: URLText, partition: CachePartition, matching headers: HeaderFields) -> Int {
        guard let variants = index.slots(url: url, partition: partition) else { return 0 }
        return removeVariants(variants, matching: headers)
    }

    /// Removes those of `variants` (the slots of one URL and partition) that `headers` select; returns how many.
    private mutating func removeVariants(_ variants: VariantSlots, matching headers: HeaderFields) -> Int {
        let matching = variants.filter { slot in
            slots[slot]?.entry.map { $0.matches(headers) } ?? unboxed[slot]?.matches(headers) == true
        }
        for slot in matching { remove(slot) }
        return matching.count
    }

    /// Removes every variant in every partition for `url`; returns how many.
    @discardableResult
    mutating func removeAll(url: URLText) -> Int {
        let doomed = index.allSlots(url: url)
        for slot in doomed { remove(slot) }
        return doomed.count
    }

    /// Removes everything.
    mutating func removeAll() {
        slots = []
        unboxed = []
        links = []
        freeSlots = []
        newest = nil
        oldest = nil
        index = VariantIndex(expecting: limits.maxEntries)
        count = 0
        totalBytes = 0
    }

    /// The stored entries from least to most recently used (for tests and diagnostics; O(n)).
    var entriesFromOldest: [(url: String, entry: CachedResponse)] {
        var result: [(url: String, entry: CachedResponse)] = []
        var cursor = oldest
        while let slot = cursor, let node = slots[slot] {
            result.append((node.url.text, anyEntry(inSlot: slot).unsafelyUnwrapped))
            cursor = links[slot].newer
        }
        return result
    }

    /// Whether the list, the index and the counters agree (for tests; O(n)).
    var isConsistent: Bool {
        var walked = 0
        var bytes = 0
        var cursor = oldest
        var previous: Int?
        while let slot = cursor, let node = slots[slot] {
            guard links[slot].older == previous,
                index.slots(url: node.url, partition: node.partition)?.contains(slot) == true
            else { return false }
            walked += 1
            bytes += node.byteCount + node.decodedBytes
            previous = slot
            cursor = links[slot].newer
        }
        let indexed = index.count
        return previous == newest && walked == count && indexed == count && bytes == totalBytes
            && slots.count - freeSlots.count == count
    }

    // MARK: Linking

    private mutating func remove(_ slot: Int) {
        guard slots[slot] != nil else { return }
        unlink(slot)
        // Moved out, not copied: a copy retained each of the node's fields, and released them again.
        guard let node = slots[slot].take() else { return }
        freeSlots.append(slot)
        count -= 1
        unboxed[slot] = nil
        totalBytes -= node.byteCount + node.decodedBytes
        index.remove(slot, url: node.url, partition: node.partition)
    }

    private mutating func unlink(_ slot: Int) {
        guard slots[slot] != nil else { return }
        let link = links[slot]
        if let newerSlot = link.newer { links[newerSlot].older = link.older } else { newest = link.older }
        if let olderSlot = link.older { links[olderSlot].newer = link.newer } else { oldest = link.newer }
        links[slot] = Link()
    }

    private mutating func linkAsNewest(_ slot: Int) {
        links[slot] = Link(newer: nil, older: newest)
        if let newest { links[newest].newer = slot }
        newest = slot
        if oldest == nil { oldest = slot }
    }
}
