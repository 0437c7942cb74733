import Foundation

extension ByteStream {
    /// The same chunks, with a copy of them kept aside while it stays within `limit` bytes; when the stream ends
    /// normally with the copy whole, `complete` gets it (before the reader sees the end). Past the limit the copy is
    /// dropped at once, so the stream passes through without being buffered.
    func copyingAside(upTo limit: Int, complete: @escaping @Sendable (Data) async -> Void) -> ByteStream {
        let copy = Locked<Data?>(Data())
        return ByteStream(next: {
            guard let chunk = try await self.nextChunk() else {
                let whole = copy.withLock { copy in
                    defer { copy = nil }
                    return copy
                }
                if let whole { await complete(whole) }
                return nil
            }
            copy.withLock { copy in
                // The count only: binding the copy would share its buffer and make each append copy it whole.
                guard let kept = copy?.count else { return }
                if chunk.count > limit - kept { copy = nil } else { copy?.append(chunk) }
            }
            return chunk
        })
    }

    /// The same chunks, with `observe` told the size of each as it passes (for progress).
    func counting(_ observe: @escaping @Sendable (Int) -> Void) -> ByteStream {
        ByteStream(next: {
            let chunk = try await self.nextChunk()
            if let chunk { observe(chunk.count) }
            return chunk
        })
    }

    /// The same chunks, failing with ``InvalidRequestReason/bodyLengthMismatch(declared:produced:)`` when they add up
    /// to more than `length` (before the chunk that passes it is handed on) or end short of it.
    func holding(toLength length: Int) -> ByteStream {
        let produced = Locked(0)
        return ByteStream(next: {
            let chunk = try await self.nextChunk()
            let total = produced.withLock { produced in
                let count = chunk?.count ?? 0
                produced = count > Int.max - produced ? Int.max : produced + count
                return produced
            }
            if chunk == nil ? total != length : total > length {
                throw APIError.invalidRequest(.bodyLengthMismatch(declared: length, produced: total))
            }
            return chunk
        })
    }
}
