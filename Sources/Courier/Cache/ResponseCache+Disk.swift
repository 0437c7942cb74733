import Foundation

/// The disk tier of a ``ResponseCache`` (see ``DiskStore``): opening a directory, promoting what a memory miss finds
/// on disk, and writing through what memory stores.
extension ResponseCache {
    /// Why a directory cannot hold a cache's disk tier.
    public struct StorageError: Error, CustomStringConvertible {
        /// The kinds of refusal, for a caller that handles one (say, by falling back to a cache in memory).
        public enum Reason: Sendable, Hashable {
            /// Another cache, in this process or another, has the directory open: one cache per directory at a
            /// time. The refusal ends when that cache is released or its process ends.
            case inUse
            /// Its `courier-cache` subdirectory exists but is not Courier's: it holds files without Courier's
            /// marker, is a symbolic link, or belongs to another user. Courier never adopts it, since it would then
            /// delete files it did not write.
            case notCourierOwned
            /// The file system refused: the path is a file, say, or not writable.
            case unusable
        }

        /// The directory asked for.
        public let directory: URL
        /// What kind of refusal it is.
        public let reason: Reason
        /// What the file system said.
        public let underlying: any Error

        /// The directory and the cause, as a sentence.
        public var description: String {
            "the cache directory \(directory.path) cannot be used: \(underlying)"
        }
    }

    /// Creates a cache that keeps its entries in `directory` as well as in memory: a new cache over the same
    /// directory (in this process or a later one) serves what an earlier one stored.
    ///
    /// Every entry is one file, written to a temporary name, flushed and renamed into place, so a process killed at
    /// any moment leaves the old entry or the new one, never a torn one; each file carries a checksum, and one that
    /// fails it is removed, never served. The least recently used files go first when a bound is reached, in the
    /// order of their last use across restarts. Entries whose URL carries a credential (user information, a
    /// credential query parameter) or that vary on a credential header stay in memory only; partitions are written
    /// as SHA-256 digests, never in the clear, and no response field the credential policy names is stored at all.
    ///
    /// The files live in a subdirectory Courier creates and marks, `directory/courier-cache` (with a `CACHEDIR.TAG`),
    /// so `directory` may hold files of its own: Courier deletes only files it named, in that subdirectory, never
    /// through a symbolic link, and refuses a `courier-cache` it did not make. Directories are created `0700`, files
    /// `0600`. The cache holds an exclusive lock on the subdirectory while it lives: a second cache over the same
    /// directory, in this process or another, is refused with ``StorageError/Reason/inUse`` rather than left to
    /// delete the first one's files and multiply its limits.
    ///
    /// ```swift
    /// let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask)[0]
    /// let cache = try ResponseCache(directory: caches.appendingPathComponent("api"))
    /// ```
    ///
    /// - Parameters:
    ///   - directory: Where the files live, in a `courier-cache` subdirectory; created if missing. One cache per
    ///     directory at a time.
    ///   - maxDiskEntries: The most files kept; 10,000 by default.
    ///   - maxDiskBytes: The most bytes kept on disk (whole files); 256 MiB by default.
    ///   - maxEntries: The most entries kept in memory; 1,000 by default.
    ///   - maxBytes: The most bytes kept in memory; 32 MiB by default.
    ///   - maxEntryBytes: The largest single entry stored; 4 MiB by default.
    /// - Throws: ``StorageError`` when the directory cannot be created or read, is not Courier's, or another cache
    ///   has it open (``StorageError/Reason``).
    public init(
        directory: URL, maxDiskEntries: Int = 10_000, maxDiskBytes: Int = 256 << 20, maxEntries: Int = 1_000,
        maxBytes: Int = 32 << 20, maxEntryBytes: Int = 4 << 20
    ) throws(StorageError) {
        try self.init(
            directory: directory, maxDiskEntries: maxDiskEntries, maxDiskBytes: maxDiskBytes, maxEntries: maxEntries,
            maxBytes: maxBytes, maxEntryBytes: maxEntryBytes, probe: nil)
    }

    /// The public initializer, with a seam for tests into the disk tier's writes.
    init(
        directory: URL, maxDiskEntries: Int = 10_000, maxDiskBytes: Int = 256 << 20, maxEntries: Int = 1_000,
        maxBytes: Int = 32 << 20, maxEntryBytes: Int = 4 << 20, probe: DiskStoreProbe?
    ) throws(StorageError) {
        let limits = DiskStore.Limits(
            maxEntries: max(0, maxDiskEntries), maxBytes: max(0, maxDiskBytes),
            maxEntryBytes: min(max(0, maxEntryBytes), max(0, maxDiskBytes)))
        let disk: DiskStore
        do {
            disk = try DiskStore(directory: directory, limits: limits, probe: probe)
        } catch {
            let reason: StorageError.Reason =
                switch error as? DiskDirectory.Refusal {
                case .inUse: .inUse
                case .notOwned: .notCourierOwned
                case .failed, nil: .unusable
                }
            throw StorageError(directory: directory, reason: reason, underlying: error)
        }
        self.init(maxEntries: maxEntries, maxBytes: maxBytes, maxEntryBytes: maxEntryBytes, disk: disk)
    }

    // MARK: Disk Tier

    /// The number of responses stored on disk; `0` without a directory.
    public nonisolated var diskCount: Int { disk?.count ?? 0 }
    /// The bytes of the files on disk; `0` without a directory.
    public nonisolated var diskBytes: Int { disk?.totalBytes ?? 0 }
    /// The bytes stored: the sum of every entry's ``CachedResponse/byteCount``, plus its body's length again for an
    /// entry kept with its decoded value (a fresh hit of a decoded type keeps one; see <doc:ResponseCaching>).
    public var totalBytes: Int { state.withLock { $0.storage.totalBytes } }
    /// The variant `request` selects read from the disk tier, after a miss in memory, and stored in memory unless
    /// memory changed meanwhile (`seen` are the generations the miss saw) or a removal of the URL overtook the read:
    /// a newer entry is never replaced by an older file, and an invalidated file never returns to memory.
    nonisolated func promoted(
        url: URLText, partition: CachePartition, _ request: TransportRequest, seen: [UInt64]
    ) -> CachedResponse? {
        guard let disk,
            let (loaded, ticket) = disk.load(url: url.text, partition: { partition.digest }, matching: request.headers)
        else { return nil }
        guard var found = loaded.first else {
            disk.finish(ticket)
            return nil
        }
        state.withLock { state in
            state.counters.diskReads += loaded.count
            // The ticket is checked under the cache's lock: a removal takes its own there, so one that overtook the
            // read is seen here, and one that comes later removes what this inserts.
            let isOvertaken = disk.finish(ticket, isOvertakenFor: url.text)
            guard state.storage.candidates(url: url, partition: partition).map(\.id) == seen, !isOvertaken else {
                return
            }
            let insertion = state.storage.insert(found, url: url, partition: partition, replacing: request.headers)
            state.counters.evictions += insertion.evicted
            if insertion.stored { found.generation = insertion.generation }
        }
        return found
    }

    /// Writes what memory now holds for `request`'s variant to the disk tier (or removes it there), outside the
    /// lock, in the caller's task. `ticket` was taken when memory changed (see ``DiskTickets``).
    nonisolated func persist(
        _ entry: CachedResponse?, url: URLText, _ partition: CachePartition, _ request: TransportRequest,
        ticket: UInt64?
    ) {
        guard let disk, let ticket else { return }
        let digest = partition.digest
        guard let entry, DiskStore.mayPersist(entry, for: request) else {
            disk.removeVariants(url: url.text, partition: digest, matching: request.headers, ticket: ticket)
            return
        }
        let record = DiskRecord(
            url: url.text, partition: digest, varyNames: entry.varyNames, varyValues: entry.varyValues)
        disk.write(entry, record: record, replacing: request.headers, ticket: ticket)
    }
}
