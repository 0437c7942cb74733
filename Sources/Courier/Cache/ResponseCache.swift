import Foundation

/// A private HTTP cache (RFC 9111) in memory, and optionally on disk: freshness, `ETag`/`Last-Modified`
/// revalidation, `Vary` variants, partial content, invalidation by unsafe methods, bounded by entry count and bytes
/// with least-recently-used eviction.
///
/// ``init(directory:maxDiskEntries:maxDiskBytes:maxEntries:maxBytes:maxEntryBytes:)`` keeps every entry in a
/// directory as well, so a later process starts warm; the memory tier stays in front, and a fresh hit in it costs
/// no disk I/O.
///
/// ``APIClient`` uses one through ``APIClient/Configuration/cache``; it can also be used on its own:
///
/// ```swift
/// let cache = ResponseCache(maxEntries: 500, maxBytes: 16 << 20)
/// switch await cache.lookup(request, partition: user.id, now: Date()) {
/// case .hit(let entry): return entry.response
/// case .validate(let entry, let conditional): ...  // 304 → cache.revalidated(entry, with: ...)
/// case .miss, .staleWhileRevalidate, .unsatisfiable: ...
/// }
/// ```
///
/// Only responses to `GET` are stored and served. The cache key is the normalized URL (see ``RequestKey``), the
/// `partition` (the caller's identity) and the request's credential header values; `Vary` adds variants under one
/// key (§4.1). Storing `private` responses and responses to requests with `Authorization` is allowed: the cache is
/// private to one client, and partitioned by identity, so one user's response is never served to another.
///
/// - Important: Concurrency contract. The cache's critical sections only look up, link and count: parsing the
///   request's `Cache-Control`, normalizing the URL and parsing a response's headers happen in the caller's task,
///   and no critical section suspends, so no invariant spans an `await`. Callers that race to store the same URL
///   simply leave the last response stored.
///
/// The storage sits behind a lock rather than on the actor's executor, and the lookup and store methods are
/// `nonisolated`: a fresh hit then costs no executor hop at all. Hopping onto the actor and back to the
/// caller's executor measured 5–10 µs per hit on a 2-core Linux machine, several times the lookup itself.
public actor ResponseCache {
    /// Counters since the cache was made; see ``statistics``.
    public struct Statistics: Sendable, Hashable {
        /// Lookups answered from storage without waiting for the server (fresh, acceptably stale, or
        /// stale-while-revalidate).
        public var hits = 0
        /// Lookups that had to go to the server (nothing stored, or the stored response needed validation).
        public var misses = 0
        /// Responses stored (including replacements).
        public var stores = 0
        /// Entries evicted to respect ``ResponseCache/maxEntries`` and ``ResponseCache/maxBytes``.
        public var evictions = 0
        /// Stored responses freshened by a `304 Not Modified`.
        public var revalidations = 0
        /// Entries removed by unsafe requests (§4.4) or ``ResponseCache/remove(url:)``.
        public var invalidations = 0
        /// Entries read from the disk tier into memory (each is a file read; a hit in memory reads nothing).
        public var diskReads = 0
    }

    /// The most entries kept at once.
    public nonisolated let maxEntries: Int
    /// The most bytes kept at once, counted as ``CachedResponse/byteCount``: header names and values (UTF-8) plus
    /// bodies.
    public nonisolated let maxBytes: Int
    /// The largest single entry that is stored; larger responses pass through uncached.
    public nonisolated let maxEntryBytes: Int

    /// The entries and the counters, changed together under one lock.
    struct State {
        var storage: CacheStorage
        var counters = Statistics()
    }

    nonisolated let state: Locked<State>
    /// The storage's count of insertions and the misses of lookups it made unnecessary, both read and counted without
    /// the lock (``NothingStored``).
    nonisolated let insertions: PublishedInsertions
    /// The disk tier, when the cache keeps its entries in a directory too.
    nonisolated let disk: DiskStore?

    /// Creates an empty cache in memory.
    ///
    /// - Parameters:
    ///   - maxEntries: The most entries kept at once; 1,000 by default.
    ///   - maxBytes: The most bytes kept at once (headers plus bodies); 32 MiB by default.
    ///   - maxEntryBytes: The largest single entry stored; 4 MiB by default, and never more than `maxBytes`.
    public init(maxEntries: Int = 1_000, maxBytes: Int = 32 << 20, maxEntryBytes: Int = 4 << 20) {
        self.init(maxEntries: maxEntries, maxBytes: maxBytes, maxEntryBytes: maxEntryBytes, disk: nil)
    }

    init(maxEntries: Int, maxBytes: Int, maxEntryBytes: Int, disk: DiskStore?) {
        self.maxEntries = max(0, maxEntries)
        self.maxBytes = max(0, maxBytes)
        self.maxEntryBytes = min(max(0, maxEntryBytes), self.maxBytes)
        let limits = CacheStorage.Limits(
            maxEntries: self.maxEntries, maxBytes: self.maxBytes, maxEntryBytes: self.maxEntryBytes)
        let storage = CacheStorage(limits: limits)
        insertions = storage.published
        state = Locked(State(storage: storage))
        self.disk = disk
    }

    // MARK: Inspecting

    /// The number of responses stored in memory (every variant and partition counts).
    public var count: Int { state.withLock { $0.storage.count } }
    /// Hits, misses, stores, evictions, revalidations and invalidations so far.
    public var statistics: Statistics {
        var counters = state.withLock { $0.counters }
        counters.misses += insertions.provenMisses.load(ordering: .relaxed)
        return counters
    }

    /// The stored response `request` selects in `partition`, whatever its freshness; marks it recently used.
    ///
    /// - Parameters:
    ///   - request: A `GET` request.
    ///   - partition: The identity the response was stored under, or `nil`.
    /// - Returns: The stored response, or `nil`.
    public nonisolated func cachedResponse(for request: TransportRequest, partition: String?) async -> CachedResponse? {
        let url = request.urlText
        return entry(url: url, partition: CachePartition(identity: partition, request: request), request)
    }

    // MARK: Looking Up

    /// Decides how `request` is answered (RFC 9111 §4): from storage, after validation, or from the server.
    ///
    /// - Parameters:
    ///   - request: The request as built, before adapters run.
    ///   - partition: The caller's identity, so that users never share responses; `nil` for anonymous requests.
    ///   - policy: The request's ``CachePolicy``.
    ///   - now: The current date, from the client's date source.
    /// - Returns: What to do; a request that is not a plain `GET` is always a ``CacheLookup/miss``.
    public nonisolated func lookup(
        _ request: TransportRequest, partition: String?, policy: CachePolicy = .useProtocolPolicy, now: Date
    ) async -> CacheLookup {
        lookupNow(request, partition: partition, policy: policy, now: now)
    }

    /// ``lookup(_:partition:policy:now:)`` without the suspension point: the work is short, under the cache's lock,
    /// and the client calls it from its own call path, where an `async` entry would cost a hop to the generic executor.
    nonisolated func lookupNow(_ request: TransportRequest, partition: String?, policy: CachePolicy, now: Date)
        -> CacheLookup
    {
        var proof = NothingStored.unproven
        return lookupNow(request, partition: partition, policy: policy, now: now, nothingStored: &proof)
    }

    /// ``lookupNow(_:partition:policy:now:)``, which also sets `nothingStored` when it found nothing at all stored for
    /// the request's URL and partition (see ``NothingStored``).
    nonisolated func lookupNow(
        _ request: TransportRequest, partition: String?, policy: CachePolicy, now: Date,
        nothingStored: inout NothingStored
    ) -> CacheLookup {
        guard CacheLookup.isServable(request), policy != .reloadIgnoringCache else {
            return policy == .onlyIfCached ? .unsatisfiable : .miss
        }
        let url = request.urlText
        let directives = Freshness.requestDirectives(request.headers)
        let partition = CachePartition(identity: partition, request: request)
        return decide(url: url, partition: partition, request, directives, policy, now, nothingStored: &nothingStored)
    }

    // MARK: Critical Sections

    /// The variant `request` selects. `Vary` matching runs outside the lock: how much of it there is depends on the
    /// server, and a slow match must not hold up every other lookup.
    nonisolated func entry(url: URLText, partition: CachePartition, _ request: TransportRequest)
        -> CachedResponse?
    {
        entry(
            url: url, partition: partition, request,
            found: state.withLock { $0.storage.unvariedEntry(url: url, partition: partition) })
    }

    /// ``entry(url:partition:_:)`` once the first critical section `found` what it found.
    private nonisolated func entry(
        url: URLText, partition: CachePartition, _ request: TransportRequest, found: CacheStorage.UnvariedLookup
    ) -> CachedResponse? {
        switch found {
        case .entry(let entry): return entry
        case .none: return promoted(url: url, partition: partition, request, seen: [])
        case .needsMatching: break
        }
        let candidates = state.withLock { $0.storage.candidates(url: url, partition: partition) }
        guard let chosen = candidates.first(where: { $0.entry.matches(request.headers) }) else {
            return promoted(url: url, partition: partition, request, seen: candidates.map(\.id))
        }
        state.withLock { $0.storage.touch(chosen) }
        return chosen.entry
    }

    nonisolated func decide(
        url: URLText, partition: CachePartition, _ request: TransportRequest, _ directives: CacheControl,
        _ policy: CachePolicy, _ now: Date, nothingStored: inout NothingStored
    ) -> CacheLookup {
        // Without a disk tier, a URL with nothing stored is a miss (or `unsatisfiable`) whatever the request: counted
        // in the lookup's own critical section, where a second one only to count it cost about 150 instructions of
        // every call to a new URL.
        let found = state.withLock { state in
            let found = state.storage.unvariedEntry(url: url, partition: partition)
            if case .none = found, disk == nil {
                state.counters.misses += 1
                nothingStored = NothingStored(insertions: state.storage.insertions)
            }
            return found
        }
        if case .none = found, disk == nil {
            return CacheLookup.decide(entry: nil, request: request, directives: directives, policy: policy, now: now)
        }
        let stored = entry(url: url, partition: partition, request, found: found)
        // The decision is pure arithmetic on the stored entry, so it runs outside the lock.
        let decision: CacheLookup
        if let range = request.headers["Range"] {
            decision = CacheLookup.decide(
                range: ByteRangeSpec(range), entry: stored, request: request, directives: directives, policy: policy,
                now: now)
        } else if let stored, stored.isPartial {
            // A part never answers a request for the whole.
            decision = CacheLookup.decide(
                entry: nil, request: request, directives: directives, policy: policy, now: now)
        } else {
            decision = CacheLookup.decide(
                entry: stored, request: request, directives: directives, policy: policy, now: now)
        }
        state.withLock { state in
            switch decision {
            case .hit, .staleWhileRevalidate: state.counters.hits += 1
            case .validate, .miss, .unsatisfiable: state.counters.misses += 1
            }
        }
        return decision
    }

    /// Removes one stored variant, if it is still the same generation, from both tiers.
    nonisolated func removeIfCurrent(
        _ candidate: CacheStorage.Candidate, url: URLText, _ partition: CachePartition, _ request: TransportRequest
    ) {
        let removed = state.withLock { state -> (Bool, UInt64?) in
            guard state.storage.holds(candidate) else { return (false, nil) }
            state.storage.remove(candidate)
            return (true, disk?.reserve(removing: [url.text]))
        }
        if removed.0 { persist(nil, url: url, partition, request, ticket: removed.1) }
    }

    /// Stores `entry` (or removes the variant `request` selects, for `nil`) in memory, then writes the change
    /// through to the disk tier with a ticket taken in the same critical section, so that the disk applies the
    /// change only if nothing that changed memory later overtook it (see ``DiskTickets``).
    @discardableResult
    nonisolated func put(
        _ entry: CachedResponse?, url: URLText, _ partition: CachePartition, _ request: TransportRequest
    ) -> CacheStorage.Insertion {
        let (insertion, ticket) = state.withLock { state -> (CacheStorage.Insertion, UInt64?) in
            guard let entry else {
                let removed = state.storage.removeVariants(url: url, partition: partition, matching: request.headers)
                return (
                    CacheStorage.Insertion(stored: false, replaced: removed, evicted: 0),
                    disk?.reserve(removing: [url.text])
                )
            }
            let insertion = state.storage.insert(entry, url: url, partition: partition, replacing: request.headers)
            state.counters.evictions += insertion.evicted
            if insertion.stored { state.counters.stores += 1 }
            return (insertion, disk.map { insertion.stored ? $0.reserve() : $0.reserve(removing: [url.text]) })
        }
        persist(insertion.stored ? entry : nil, url: url, partition, request, ticket: ticket)
        return insertion
    }

    /// Stores an entry's fields (a complete response, without a disk tier) as the most recently used, boxed when a
    /// lookup first returns them (see
    /// ``CacheStorage/insert(fields:byteCount:variesOnNothing:url:partition:replacing:)``).
    nonisolated func put(
        fields: consuming CachedResponse.Fields, url: URLText, _ partition: CachePartition, _ request: TransportRequest
    ) -> CacheStorage.Insertion {
        // Moved into storage, not copied: a copy retained each of the fields' references, and released them again.
        let byteCount = fields.byteCount
        let variesOnNothing = fields.varyNames.isEmpty
        var pending = Optional(fields)
        return state.withLock { state in
            let insertion = state.storage.insert(
                fields: &pending, byteCount: byteCount, variesOnNothing: variesOnNothing, url: url,
                partition: partition, replacing: request.headers)
            state.counters.evictions += insertion.evicted
            if insertion.stored { state.counters.stores += 1 }
            return insertion
        }
    }

    /// Removes every entry for `urls` from both tiers; returns how many, counted in the tier that held more (the
    /// disk tier holds what memory evicted, memory what may not be written). Memory goes first, and takes the
    /// ticket that makes any write of these URLs still on its way to the disk stale.
    @discardableResult
    nonisolated func removeAll(urls: [String]) -> Int {
        let (fromMemory, ticket) = state.withLock { state in
            (urls.reduce(0) { $0 + state.storage.removeAll(url: URLText($1)) }, disk?.reserve(removing: urls))
        }
        let fromDisk = ticket.flatMap { disk?.remove(urls: urls, ticket: $0) } ?? 0
        let removed = max(fromDisk, fromMemory)
        state.withLock { $0.counters.invalidations += removed }
        return removed
    }

    // MARK: Tests

    /// The stored URLs from least to most recently used.
    var urlsFromOldest: [String] { state.withLock { $0.storage.entriesFromOldest.map(\.url) } }
    /// Whether the storage's list, index and counters agree.
    var isConsistent: Bool { state.withLock { $0.storage.isConsistent } }

    // MARK: Helpers

    /// Whether a `Cache-Control` field of `headers` mentions `no-store`: a scan of the bytes that rules most
    /// responses out without allocating or parsing. A mention is not yet a directive (it may be quoted): the caller
    /// parses the fields when this says yes.
    nonisolated static func mentionsNoStore(_ headers: HeaderFields) -> Bool {
        // By index: `contains` handed its closure a copy of each field, three retains and releases per field.
        let fields = headers.fields
        // A canonical name is lower case: compared as it is, and only when its length and first byte match
        // (`hasName` also compared `last-modified` and `accept-ranges` ignoring case, after comparing them as they are).
        for index in fields.indices where Self.isCacheControl(fields[index].canonicalName) {
            if fields[index].value.utf8.containsIgnoringASCIICase("no-store".utf8) { return true }
        }
        return false
    }

    /// Whether a canonical (lower-case) field name is `cache-control`.
    @inline(__always)
    private nonisolated static func isCacheControl(_ canonicalName: String) -> Bool {
        canonicalName.utf8.count == 13 && canonicalName.utf8.first == UInt8(ascii: "c")
            && canonicalName == "cache-control"
    }

    /// Weak comparison of entity tags (RFC 9110 §8.8.3.2): equal opaque tags, ignoring `W/`.
    nonisolated static func weakMatch(_ lhs: String, _ rhs: String) -> Bool {
        func opaque(_ tag: String) -> Substring {
            let trimmed = Substring(tag.trimmingCharacters(in: .whitespaces))
            return trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : trimmed
        }
        return opaque(lhs) == opaque(rhs)
    }

    /// Same scheme, host and port (RFC 6454), defaults applied.
    nonisolated static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
        Origin.same(lhs, rhs)
    }
}
