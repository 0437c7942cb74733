import Foundation

extension ResponseCache {
    /// Keeps `value`, the body of `entry` as a caller decoded it, beside the stored entry, so that a later fresh hit of
    /// the same type and decoder skips decoding: with Foundation's `JSONDecoder` on Linux, decoding a 200-byte object
    /// costs about twice what the rest of a hit does.
    ///
    /// The value counts its body's length again against ``maxBytes`` (the decoded form of JSON is about that size);
    /// it is not kept when the entry would then exceed ``maxEntryBytes``, when the entry is no longer the stored
    /// generation, or when a value is kept already. Only the memory tier keeps decoded values. Entries evicted to
    /// make room count in ``statistics``.
    nonisolated func keepDecoded(_ value: DecodedValue, beside entry: CachedResponse) {
        guard value.isValue, let slot = entry.storageSlot, entry.generation != 0 else { return }
        let bytes = entry.response.body.count
        state.withLock { state in
            state.counters.evictions += state.storage.keepDecoded(value, bytes: bytes, slot: slot, id: entry.generation)
        }
    }
}
