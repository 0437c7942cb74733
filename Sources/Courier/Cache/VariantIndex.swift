/// Where the variants stored for a URL are: URL → partition → slots, in the order they were stored.
///
/// Anonymous entries (no identity, no credential: a public API, or a client whose credential the cache never sees)
/// are kept in a dictionary of their own, so that looking one up hashes the URL alone. Through the partitioned
/// dictionary every lookup also hashed the partition, an identity and a list of credential lines: about 320
/// instructions of a 7,000-instruction hit. The anonymous table is a ``VariantTable``, which never hashes a URL again.
struct VariantIndex {
    private var anonymous = VariantTable()
    private var partitioned: [URLText: [CachePartition: VariantSlots]] = [:]

    /// The URLs the anonymous table is given room for when its first URL comes (see ``init(expecting:)``).
    private let room: Int

    init() { room = 0 }

    /// An index whose anonymous table gets room for the URLs of a full cache of `entries` (at most 2,048 URLs, about
    /// 200 kB, then it grows) once something is stored, so that it is at most half full: removing the URL an
    /// eviction drops moves the entries after it in its probe run, fewer the emptier the table.
    init(expecting entries: Int) {
        room = min(max(entries, 0), 2_048)
    }

    /// The slots stored for `url` and `partition`, oldest first.
    func slots(url: URLText, partition: CachePartition) -> VariantSlots? {
        partition.isAnonymous ? anonymous[url] : partitioned[url]?[partition]
    }

    /// The slot stored last for `url` and `partition`.
    func newestSlot(url: URLText, partition: CachePartition) -> Int? {
        partition.isAnonymous ? anonymous[url]?.last : partitioned[url]?[partition]?.last
    }

    /// Every slot stored for `url`, in every partition.
    func allSlots(url: URLText) -> [Int] {
        Array(anonymous[url] ?? VariantSlots()) + (partitioned[url]?.values.flatMap { $0 } ?? [])
    }

    /// The URLs with at least one stored slot.
    var urls: Set<String> { Set(anonymous.urls.map(\.text)).union(partitioned.keys.map(\.text)) }

    /// How many slots are indexed (for consistency checks).
    var count: Int {
        anonymous.allSlots.reduce(0) { $0 + $1.count }
            + partitioned.values.reduce(0) { $0 + $1.values.reduce(0) { $0 + $1.count } }
    }

    /// Adds `slot` as the newest variant for `url` and `partition`.
    mutating func append(_ slot: Int, url: URLText, partition: CachePartition) {
        if partition.isAnonymous {
            makeRoomIfEmpty()
            anonymous.modify(url) { $0.append(slot) }
        } else {
            partitioned[url, default: [:]][partition, default: VariantSlots()].append(slot)
        }
    }

    /// Adds `slot` as the only variant for `url` and `partition` when nothing is stored for them, in one lookup;
    /// otherwise adds nothing and returns the slots stored.
    mutating func addIfFirst(_ slot: Int, url: URLText, partition: CachePartition) -> VariantSlots? {
        guard partition.isAnonymous else {
            if let variants = slots(url: url, partition: partition) { return variants }
            append(slot, url: url, partition: partition)
            return nil
        }
        makeRoomIfEmpty()
        // An absent URL is given its slot in place, in the same lookup.
        return anonymous.modify(url) { variants in
            guard variants.isEmpty else { return variants }
            variants.append(slot)
            return nil
        }
    }

    /// Gives the anonymous table its room (see ``init(expecting:)``) when the first URL comes.
    private mutating func makeRoomIfEmpty() {
        if anonymous.isEmpty, anonymous.capacity < 2 * room { anonymous = VariantTable(room: room) }
    }

    /// Removes `slot` from `url` and `partition`, and the URL once nothing is left under it.
    mutating func remove(_ slot: Int, url: URLText, partition: CachePartition) {
        if partition.isAnonymous {
            // One lookup; the URL goes when nothing is left under it.
            anonymous.modify(url) { $0.remove(slot) }
            return
        }
        guard var partitions = partitioned.removeValue(forKey: url) else { return }
        if var variants = partitions.removeValue(forKey: partition) {
            variants.remove(slot)
            if !variants.isEmpty { partitions[partition] = variants }
        }
        if !partitions.isEmpty { partitioned[url] = partitions }
    }
}

extension CachePartition {
    /// Neither an identity nor a credential.
    var isAnonymous: Bool { identity == nil && credentials.isEmpty }
}

/// The slots of the variants stored for one URL and partition, oldest first.
///
/// Most URLs have one variant (no `Vary`, or one value of it so far): it is kept inline, so that storing an entry and
/// evicting it allocate and free no array. An array of one slot had cost an allocation per stored response.
struct VariantSlots: RandomAccessCollection {
    private enum Storage {
        case none
        case one(Int)
        case many([Int])
    }

    private var storage = Storage.none

    var startIndex: Int { 0 }

    var endIndex: Int {
        switch storage {
        case .none: 0
        case .one: 1
        case .many(let slots): slots.count
        }
    }

    subscript(position: Int) -> Int {
        switch storage {
        case .none: preconditionFailure("no variant at \(position)")
        case .one(let slot):
            precondition(position == 0, "no variant at \(position)")
            return slot
        case .many(let slots): return slots[position]
        }
    }

    /// Adds `slot` as the newest.
    mutating func append(_ slot: Int) {
        switch storage {
        case .none: storage = .one(slot)
        case .one(let first): storage = .many([first, slot])
        case .many(var slots):
            storage = .none  // the array is then referenced once, and appended to in place
            slots.append(slot)
            storage = .many(slots)
        }
    }

    /// Removes `slot`, wherever it is.
    mutating func remove(_ slot: Int) {
        switch storage {
        case .none: return
        case .one(let only): if only == slot { storage = .none }
        case .many(var slots):
            storage = .none
            slots.removeAll { $0 == slot }
            storage = slots.count == 1 ? .one(slots[0]) : slots.isEmpty ? .none : .many(slots)
        }
    }
}
