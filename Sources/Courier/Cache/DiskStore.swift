import Foundation

/// The disk tier of a ``ResponseCache``: one checksummed file per stored variant in a directory, bounded by
/// bytes and count with least-recently-used eviction that survives restarts (the order is the files'
/// modification times, renewed when a file is read).
///
/// What is on disk is indexed in memory (URL, partition digest, `Vary` values, size, last use), read once when
/// the store opens the directory, so lookups, removals and evictions read no file they do not need. File I/O
/// happens in the caller's task outside the index lock; a rename or unlink and the index change that goes with it
/// happen together under the lock, so the index always describes the file a name holds.
///
/// The store lives in a subdirectory it owns and locks (``DiskDirectory``), and deletes only names it made there.
/// Every write and removal carries a ticket taken when memory changed (``DiskTickets``), so the disk applies the
/// changes in memory's order even though they reach it later, each in its own task.
final class DiskStore: Sendable {
    /// The bounds of the disk tier.
    struct Limits: Sendable, Hashable {
        var maxEntries: Int
        var maxBytes: Int
        var maxEntryBytes: Int
    }

    private struct File {
        var record: DiskRecord
        var size: Int
        var lastUsed: UInt64
        /// The ticket of the write that put the file there; `0` for a file found when the store opened.
        var written: UInt64 = 0
    }

    private struct Index {
        var files: [String: File] = [:]
        /// URL → names of its files.
        var byURL: [String: Set<String>] = [:]
        var totalBytes = 0
        var clock: UInt64 = 0
        /// The order in which the cache's memory tier changed (see ``reserve(removing:)``).
        var tickets = DiskTickets()

        mutating func add(_ name: String, _ file: File) {
            remove(name)
            files[name] = file
            byURL[file.record.url, default: []].insert(name)
            totalBytes += file.size
        }

        mutating func remove(_ name: String) {
            guard let file = files.removeValue(forKey: name) else { return }
            totalBytes -= file.size
            byURL[file.record.url]?.remove(name)
            if byURL[file.record.url]?.isEmpty == true { byURL[file.record.url] = nil }
        }

        mutating func tick() -> UInt64 {
            clock &+= 1
            return clock
        }
    }

    let limits: Limits
    /// Where the entries live, and where files are written before they are renamed into place.
    private let entries: String
    private let staging: String
    private let index = Locked(Index())
    private let probe: DiskStoreProbe?
    /// The open lock file: its exclusive `flock` is this store's claim on the directory until `deinit`.
    private let lockDescriptor: Int32

    /// Opens (or creates) the tier in the subdirectory it owns in `directory` (see ``DiskDirectory``): takes the
    /// directory's lock, removes what a crash left half-written, indexes the files, and evicts down to `limits` if
    /// they shrank since the last run.
    ///
    /// - Throws: ``DiskDirectory/Refusal`` when the directory is in use, not Courier's, or cannot be made.
    init(directory: URL, limits: Limits, probe: DiskStoreProbe? = nil) throws {
        self.limits = limits
        self.probe = probe
        let opened = try DiskDirectory.take(directory)
        entries = opened.entries
        staging = opened.staging
        lockDescriptor = opened.lockDescriptor
        for name in DiskDirectory.names(in: staging) where DiskDirectory.isStagingName(name) {
            DurableFiles.remove(staging + "/" + name)
        }
        var found: [(name: String, file: File, modified: Date)] = []
        for name in DiskDirectory.names(in: entries) where DiskDirectory.isEntryName(name) {
            let path = entries + "/" + name
            guard let (size, modified) = DurableFiles.regularFile(path) else { continue }  // Never through a link.
            guard let prefix = DurableFiles.read(path, upTo: DiskEntryCodec.prefixLength),
                let length = DiskEntryCodec.recordLength(prefix: prefix),
                let head = DurableFiles.read(path, upTo: DiskEntryCodec.prefixLength + length),
                let record = DiskEntryCodec.record(head: head), record.fileName == name
            else {
                DurableFiles.remove(path)  // Torn before its record: never served. Ours by its name and place.
                continue
            }
            found.append((name, File(record: record, size: size, lastUsed: 0), modified))
        }
        found.sort { ($0.modified, $0.name) < ($1.modified, $1.name) }
        index.withLock { index in
            for item in found {
                var file = item.file
                file.lastUsed = index.tick()
                index.add(item.name, file)
            }
        }
        evictIfNeeded()
    }

    deinit {
        close(lockDescriptor)  // Releases the lock: the next opener may have the directory.
    }

    /// Files and bytes on disk.
    var count: Int { index.withLock { $0.files.count } }
    var totalBytes: Int { index.withLock { $0.totalBytes } }

    /// The URLs with at least one file.
    var urls: [String] { index.withLock { Array($0.byURL.keys) } }

    /// Whether `entry`, stored for `request`, may be written to disk: not when its URL carries a credential (user
    /// information or a credential query parameter), nor when it varies on a credential header, whose value the
    /// file would have to hold for `Vary` matching.
    static func mayPersist(_ entry: CachedResponse, for request: TransportRequest) -> Bool {
        let policy = request.credentials
        guard request.url.user == nil, request.url.password == nil,
            !entry.varyNames.contains(where: policy.isCredential(headerNamed:))
        else { return false }
        let items = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        return !items.contains { policy.queryParameters.contains($0.name.lowercased()) }
    }

    // MARK: Reading

    /// Every stored variant for `url` in `partition` that `headers` select, read and verified; a file that fails
    /// its checksum is removed. Marks what it returns as recently used.
    ///
    /// - Returns: `nil` when no file is stored for `url` (the common miss: one look at the index). Otherwise the
    ///   entries and a ticket taken before the first read, for the caller to finish with
    ///   ``finish(_:isOvertakenFor:)`` once it knows whether a removal overtook the read.
    func load(url: String, partition: () -> String, matching headers: HeaderFields)
        -> (entries: [CachedResponse], ticket: UInt64)?
    {
        guard let ticket = index.withLock({ $0.byURL[url] == nil ? nil : $0.tickets.reserve() }) else { return nil }
        let digest = partition()
        let names = index.withLock { index in
            (index.byURL[url] ?? []).filter { index.files[$0]?.record.partition == digest }
        }
        var loaded: [CachedResponse] = []
        for name in names {
            let record = index.withLock { $0.files[name]?.record }
            guard let record, record.matches(headers) else { continue }
            let path = entries + "/" + name
            guard let file = DurableFiles.read(path), let (read, entry) = DiskEntryCodec.decode(file), read == record
            else {
                discard(name)
                continue
            }
            DurableFiles.touch(path)
            index.withLock { index in
                let tick = index.tick()
                index.files[name]?.lastUsed = tick
            }
            loaded.append(entry)
        }
        return (loaded, ticket)
    }

    /// Every entry on disk with its URL, read and verified (O(n) reads: for removal by predicate).
    func allEntries() -> [(name: String, url: String, entry: CachedResponse)] {
        let names = index.withLock { Array($0.files.keys) }
        return names.compactMap { name in
            guard let file = DurableFiles.read(entries + "/" + name), let (record, entry) = DiskEntryCodec.decode(file)
            else { return nil }
            return (name, record.url, entry)
        }
    }

    // MARK: Ordering

    /// A ticket for a write or a promotion, taken under the cache's lock in the same critical section that changes
    /// memory, so tickets are in the order memory changed. The store keeps it open until ``finish(_:)``, or the
    /// write or removal given it finishes it.
    func reserve() -> UInt64 {
        index.withLock { $0.tickets.reserve() }
    }

    /// A ticket for removing what `urls` stored (every URL when `urls` is `nil`), taken under the cache's lock as
    /// the removal leaves memory: from then on a write or a promotion for those URLs with an older ticket is
    /// overtaken, whatever the order the disk sees them in.
    func reserve(removing urls: [String]?) -> UInt64 {
        index.withLock { $0.tickets.reserve(removing: urls) }
    }

    /// Closes a ticket that no write or removal was given.
    func finish(_ ticket: UInt64) {
        index.withLock { $0.tickets.finish(ticket) }
    }

    /// Closes a promotion's ticket, and says whether a removal of `url` overtook it (see ``DiskTickets``).
    func finish(_ ticket: UInt64, isOvertakenFor url: String) -> Bool {
        index.withLock { index in
            defer { index.tickets.finish(ticket) }
            return index.tickets.isOvertaken(ticket, url: url)
        }
    }

    // MARK: Writing

    /// Writes `entry` durably, replacing the file of the same variant and removing the other variants `headers`
    /// select (their `Vary` may differ from the new one's), then evicts down to the limits.
    ///
    /// The write commits only if nothing overtook it since `ticket` was reserved: a removal of its URL (an
    /// invalidation), or a newer write of the same variant. Otherwise it is dropped, and an older file of its variant
    /// goes too, since memory now holds something newer than that file.
    ///
    /// - Returns: Whether the entry is on disk.
    @discardableResult
    func write(_ entry: CachedResponse, record: DiskRecord, replacing headers: HeaderFields, ticket: UInt64) -> Bool {
        let name = record.fileName
        let data = DiskEntryCodec.encode(entry, record: record)
        guard data.count <= limits.maxEntryBytes, data.count <= limits.maxBytes, limits.maxEntries > 0 else {
            removeVariants(url: record.url, partition: record.partition, matching: headers, ticket: ticket)
            return false
        }
        let path = staging + "/" + DiskDirectory.stagingName()
        guard DurableFiles.writeNew(data, to: path) else {
            DurableFiles.remove(path)
            finish(ticket)
            return false
        }
        probe?.reachedCommit(url: record.url)
        let committed = index.withLock { index -> Bool in
            defer { index.tickets.finish(ticket) }
            let existing = index.files[name]
            if index.tickets.isOvertaken(ticket, url: record.url) || existing.map({ $0.written > ticket }) == true {
                if let existing, existing.written < ticket {
                    DurableFiles.remove(entries + "/" + name)
                    index.remove(name)
                }
                return false
            }
            let others = (index.byURL[record.url] ?? []).filter { other in
                guard other != name, let file = index.files[other] else { return false }
                return file.record.partition == record.partition && file.record.matches(headers)
                    && file.written < ticket
            }
            guard DurableFiles.replace(entries + "/" + name, with: path) else { return false }
            index.add(name, File(record: record, size: data.count, lastUsed: index.tick(), written: ticket))
            for other in others {
                DurableFiles.remove(entries + "/" + other)
                index.remove(other)
            }
            return true
        }
        guard committed else {
            DurableFiles.remove(path)  // Dropped, or the rename failed: the staged file is all that is left.
            return false
        }
        DurableFiles.syncDirectory(entries)
        evictIfNeeded()
        return true
    }

    // MARK: Removing

    /// Removes the variants for `url` in `partition` that `headers` select and that were written before `ticket`
    /// (one written after it is newer than the removal); finishes the ticket.
    func removeVariants(url: String, partition: String, matching headers: HeaderFields, ticket: UInt64) {
        index.withLock { index in
            defer { index.tickets.finish(ticket) }
            for name in index.byURL[url] ?? [] {
                guard let file = index.files[name], file.record.partition == partition, file.record.matches(headers),
                    file.written < ticket
                else { continue }
                DurableFiles.remove(entries + "/" + name)
                index.remove(name)
            }
        }
    }

    /// Removes every file for each of `urls` written before `ticket`; finishes the ticket and returns how many.
    @discardableResult
    func remove(urls: [String], ticket: UInt64) -> Int {
        index.withLock { index in
            defer { index.tickets.finish(ticket) }
            var removed = 0
            for url in urls {
                for name in index.byURL[url] ?? [] where (index.files[name]?.written ?? 0) < ticket {
                    DurableFiles.remove(entries + "/" + name)
                    index.remove(name)
                    removed += 1
                }
            }
            return removed
        }
    }

    /// Removes the files named.
    func remove(names: [String]) {
        index.withLock { index in
            for name in names where index.files[name] != nil {
                DurableFiles.remove(entries + "/" + name)
                index.remove(name)
            }
        }
    }

    /// Removes every file written before `ticket`; finishes the ticket.
    func removeAll(ticket: UInt64) {
        index.withLock { index in
            defer { index.tickets.finish(ticket) }
            for (name, file) in index.files where file.written < ticket {
                DurableFiles.remove(entries + "/" + name)
                index.remove(name)
            }
        }
    }

    /// Removes a file that failed to read or verify.
    private func discard(_ name: String) {
        remove(names: [name])
    }

    /// Removes least recently used files until the limits hold.
    private func evictIfNeeded() {
        index.withLock { index in
            guard index.files.count > limits.maxEntries || index.totalBytes > limits.maxBytes else { return }
            let byAge = index.files.sorted { $0.value.lastUsed < $1.value.lastUsed }.map(\.key)
            for name in byAge {
                guard index.files.count > limits.maxEntries || index.totalBytes > limits.maxBytes else { break }
                DurableFiles.remove(entries + "/" + name)
                index.remove(name)
            }
        }
    }
}
