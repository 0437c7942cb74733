import Foundation

/// The bounded hand-over between a producer thread that may block (URLSession's work queue, delivering response
/// bytes) and one asynchronous reader: the state machine behind a streamed response body of
/// ``URLSessionTransport``.
///
/// The producer appends chunks; once `limit` bytes wait unread it is told to block (``Push/block``) and the reader
/// wakes it (``Pull/chunk(_:wakeProducer:)``) when it has drained below the limit. What is held never exceeds the
/// limit plus one chunk. Every method is a short critical section that returns what to do; waking and resuming
/// happen after it, outside the lock.
struct StreamingBuffer: Sendable {
    /// What the producer must do after offering a chunk.
    enum Push {
        /// Nothing: the chunk was queued (or dropped after the end).
        case proceed
        /// Hand the chunk to the reader that waits for it.
        case deliver(CheckedContinuation<Data?, any Error>, Data)
        /// Block until the reader drains the buffer (or the stream ends).
        case block
    }

    /// What the reader gets when it asks for the next chunk.
    enum Pull {
        /// A chunk; wake the blocked producer when `wakeProducer`.
        case chunk(Data, wakeProducer: Bool)
        /// The body ended normally.
        case end
        /// The body ended with an error.
        case failed(any Error)
        /// Nothing yet: the continuation was kept and is resumed by a later push or end.
        case wait
    }

    let limit: Int
    private var chunks: [Data] = []
    private var first = 0
    private var buffered = 0
    private var reader: CheckedContinuation<Data?, any Error>?
    private var producerBlocked = false
    private var end: Result<Void, any Error>?

    init(limit: Int) {
        self.limit = max(1, limit)
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
        guard buffered >= limit else { return .proceed }
        producerBlocked = true
        return .block
    }

    /// The reader asks for the next chunk; `continuation` is kept when there is none yet.
    mutating func pull(_ continuation: CheckedContinuation<Data?, any Error>) -> Pull {
        if first < chunks.count {
            let chunk = chunks[first]
            first += 1
            buffered -= chunk.count
            if first == chunks.count {
                chunks.removeAll(keepingCapacity: true)
                first = 0
            }
            let wake = producerBlocked && buffered < limit
            if wake { producerBlocked = false }
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
            producerBlocked = false
        }
        return (reader, producerBlocked)
    }
}
