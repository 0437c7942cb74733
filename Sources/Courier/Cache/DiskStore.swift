import Foundation

/// The disk tier of a ``ResponseCache``: one checksummed file per stored variant in a directory, bounded by
/// bytes and count with least-recently-used eviction that survives restarts (the order is the files'
/// modification times, renewed when a file is read).
///
/// What is on disk is indexed in memory (URL, partition digest, `Vary` values, size, last use), read once when
/// the store opens the directory, so lookups, removals and evictions read no file they do not need. File I/O
/// happens in the caller's task outside the index lock; a rename or unlink and the index change that goes with it
/// happen together under the lock, so the index always describes the file a name holds.
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
    }

    private struct Index {
        var files: [String: File] = [:]
        /// URL → names of its files.
        var byURL: [String: Set<String>] = [:]
        var totalBytes = 0
        var clock: UInt64 = 0

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
    private let temporary: String
    private let index = Locked(Index())

    /// Opens (or creates) the tier in `directory`: removes what a crash left half-written, indexes the files, and
    /// evicts down to `limits` if they shrank since the last run.
    init(directory: URL, limits: Limits) throws {
        self.limits = limits
        entries = directory.appendingPathComponent("entries").path
        temporary = directory.appendingPathComponent("tmp").path
        let manager = FileManager.default
        try manager.createDirectory(atPath: entries, withIntermediateDirectories: true)
        try manager.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        for leftover in (try? manager.contentsOfDirectory(atPath: temporary)) ?? [] {
            DurableFiles.remove(temporary + "/" + leftover)
        }
        var found: [(name: String, file: File, modified: Date)] = []
        for name in try manager.contentsOfDirectory(atPath: entries) where name.hasSuffix(DiskEntryCodec.fileExtension)
        {
            let path = entries + "/" + name
            guard let attributes = try? manager.attributesOfItem(atPath: path),
                let size = (attributes[.size] as? NSNumber)?.intValue,
                let prefix = DurableFiles.read(path, upTo: DiskEntryCodec.prefixLength),
                let length = DiskEntryCodec.recordLength(prefix: prefix),
                let head = DurableFiles.read(path, upTo: DiskEntryCodec.prefixLength + length),
                let record = DiskEntryCodec.record(head: head), record.fileName == name
            else {
                DurableFiles.remove(path)  // Not ours, or torn before its record: never served.
                continue
            }
            let modified = attributes[.modificationDate] as? Date ?? .distantPast
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
    func load(url: String, partition: () -> String, matching headers: HeaderFields) -> [CachedResponse] {
        guard index.withLock({ $0.byURL[url] != nil }) else { return [] }
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
        return loaded
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

    // MARK: Writing

    /// Writes `entry` durably, replacing the file of the same variant and removing the other variants `headers`
    /// select (their `Vary` may differ from the new one's), then evicts down to the limits.
    ///
    /// - Returns: Whether the entry is on disk.
    @discardableResult
    func write(_ entry: CachedResponse, record: DiskRecord, replacing headers: HeaderFields) -> Bool {
        let name = record.fileName
        let data = DiskEntryCodec.encode(entry, record: record)
        guard data.count <= limits.maxEntryBytes, data.count <= limits.maxBytes, limits.maxEntries > 0 else {
            removeVariants(url: record.url, partition: record.partition, matching: headers)
            return false
        }
        let staging = temporary + "/" + UUID().uuidString
        guard DurableFiles.writeNew(data, to: staging) else {
            DurableFiles.remove(staging)
            return false
        }
        index.withLock { index in
            let others = (index.byURL[record.url] ?? []).filter { other in
                guard other != name, let file = index.files[other] else { return false }
                return file.record.partition == record.partition && file.record.matches(headers)
            }
            guard DurableFiles.replace(entries + "/" + name, with: staging) else { return }
            index.add(name, File(record: record, size: data.count, lastUsed: index.tick()))
            for other in others {
                DurableFiles.remove(entries + "/" + other)
                index.remove(other)
            }
        }
        DurableFiles.remove(staging)  // Still there only if the rename failed.
        DurableFiles.syncDirectory(entries)
        evictIfNeeded()
        return true
    }

    // MARK: Removing

    /// Removes the variants for `url` in `partition` that `headers` select.
    func removeVariants(url: String, partition: String, matching headers: HeaderFields) {
        index.withLock { index in
            for name in index.byURL[url] ?? [] {
                guard let file = index.files[name], file.record.partition == partition, file.record.matches(headers)
                else { continue }
                DurableFiles.remove(entries + "/" + name)
                index.remove(name)
            }
        }
    }

    /// Removes every file for each of `urls`; returns how many.
    @discardableResult
    func remove(urls: [String]) -> Int {
        index.withLock { index in
            var removed = 0
            for url in urls {
                for name in index.byURL[url] ?? [] {
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

    /// Removes every file.
    func removeAll() {
        index.withLock { index in
            for name in index.files.keys { DurableFiles.remove(entries + "/" + name) }
            index = Index()
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
