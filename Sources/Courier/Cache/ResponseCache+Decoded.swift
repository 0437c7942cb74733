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
        let bytes = entry.body.count
        state.withLock { state in
            state.counters.evictions += state.storage.keepDecoded(value, bytes: bytes, slot: slot, id: entry.generation)
        }
    }

    /// Keeps `served`, the stored entry as served at one age, beside it: later hits within the same second serve it
    /// as it is. Nothing is kept when the entry is no longer the stored generation.
    nonisolated func keepServed(_ served: CachedResponse.Served, beside entry: CachedResponse) {
        guard entry.lastServed?.age != served.age, let slot = entry.storageSlot, entry.generation != 0 else { return }
        state.withLock { $0.storage.keepServed(served, slot: slot, id: entry.generation) }
    }
}
