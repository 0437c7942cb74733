import Foundation

/// The hand-over between a producer thread that may wait only briefly (URLSession's callbacks, delivering response
/// bytes) and one asynchronous reader: the state machine behind a streamed response body of ``URLSessionTransport``.
///
/// The producer appends chunks. Once `pauseAt` bytes wait unread it is told to wait (``Push/wait``), and the reader
/// wakes it (``Pull/chunk(_:wakeProducer:)``) once it has drained them to a quarter of that. A producer whose wait
/// ran out (``producerStoppedWaiting()``) is not told to wait again until the reader has caught up; it is stopped
/// for good at `limit` (``Push/overflow``). When the reader fell behind, what waits is handed over in pieces of up to
/// ``batchBytes``, so that catching up costs one wake-up per batch instead of one per network read. Every method is
/// a short critical section that returns what to do; waking and resuming happen after it, outside the lock.
struct StreamingBuffer: Sendable {
    /// What the producer must do after offering a chunk.
    enum Push {
        /// Nothing: the chunk was queued (or dropped after the end).
        case proceed
        /// Hand the chunk to the reader that waits for it.
        case deliver(CheckedContinuation<Data?, any Error>, Data)
        /// Wait until the reader drains the buffer (or the stream ends).
        case wait
        /// `limit` bytes wait unread: end the stream.
        case overflow
    }

    /// What the reader gets when it asks for the next chunk.
    enum Pull {
        /// A chunk; wake the waiting producer when `wakeProducer`.
        case chunk(Data, wakeProducer: Bool)
        /// The body ended normally.
        case end
        /// The body ended with an error.
        case failed(any Error)
        /// Nothing yet: the continuation was kept and is resumed by a later push or end.
        case wait
    }

    /// The most bytes joined into one chunk for a reader that fell behind.
    static let batchBytes = 1 << 20

    let limit: Int
    let pauseAt: Int
    private var chunks: [Data] = []
    private var first = 0
    private var buffered = 0
    private var reader: CheckedContinuation<Data?, any Error>?
    private var producerWaiting = false
    /// False once a wait of the producer ran out, until the reader catches up.
    private var producerMayWait = true
    private var end: Result<Void, any Error>?

    init(limit: Int, pauseAt: Int) {
        self.limit = max(1, limit)
        self.pauseAt = min(max(1, pauseAt), self.limit)
    }

    /// Whether the body has ended (normally, with an error, or because the reader left).
    var hasEnded: Bool { end != nil }

    /// The producer offers `chunk`.
    mutating func push(_ chunk: Data) -> Push {
        guard end == nil, !chunk.isEmpty else { return .proceed }
        if let reader {
            self.reader = nil
            return .deliver(reader, chunk)
        }
        chunks.append(chunk)
        buffered += chunk.count
        if buffered >= limit { return .overflow }
        guard buffered >= pauseAt, producerMayWait else { return .proceed }
        producerWaiting = true
        return .wait
    }

    /// The reader asks for the next chunk; `continuation` is kept when there is none yet.
    mutating func pull(_ continuation: CheckedContinuation<Data?, any Error>) -> Pull {
        if first < chunks.count {
            let chunk = takeBatch()
            buffered -= chunk.count
            if first == chunks.count {
                chunks.removeAll(keepingCapacity: true)
                first = 0
            }
            let caughtUp = buffered <= pauseAt / 4
            if caughtUp { producerMayWait = true }
            let wake = producerWaiting && caughtUp
            if wake { producerWaiting = false }
            return .chunk(chunk, wakeProducer: wake)
        }
        switch end {
        case .success?: return .end
        case .failure(let error)?: return .failed(error)
        case nil:
            reader = continuation
            return .wait
        }
    }

    /// The next queued chunk, joined with those after it up to ``batchBytes``.
    private mutating func takeBatch() -> Data {
        let chunk = chunks[first]
        chunks[first] = Data()
        first += 1
        guard first < chunks.count, chunk.count + chunks[first].count <= Self.batchBytes else { return chunk }
        var batch = Data(capacity: Self.batchBytes)
        batch.append(chunk)
        while first < chunks.count, batch.count + chunks[first].count <= Self.batchBytes {
            batch.append(chunks[first])
            chunks[first] = Data()
            first += 1
        }
        return batch
    }

    /// The producer's wait ran out before the reader woke it. Returns whether a wake-up was sent meanwhile (the
    /// producer must then take it, so that it does not end a later wait early).
    mutating func producerStoppedWaiting() -> Bool {
        guard producerWaiting else { return true }
        producerWaiting = false
        producerMayWait = false
        return false
    }

    /// Ends the body; what is still buffered stays readable unless `discarding` (the reader left). Returns the
    /// reader to resume and whether the producer must be woken; nil when the body had already ended.
    mutating func finish(_ result: Result<Void, any Error>, discarding: Bool = false)
        -> (reader: CheckedContinuation<Data?, any Error>?, wakeProducer: Bool)?
    {
        guard end == nil else { return nil }
        end = result
        if discarding {
            chunks = []
            first = 0
            buffered = 0
        }
        defer {
            reader = nil
            producerWaiting = false
        }
        return (reader, producerWaiting)
    }
}
