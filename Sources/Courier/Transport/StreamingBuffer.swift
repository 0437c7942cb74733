import Foundation

/// The hand-over between a producer that must never wait (URLSession's callbacks, delivering response bytes) and one
/// asynchronous reader: the state machine behind a streamed response body of ``URLSessionTransport``.
///
/// The producer appends chunks and is never made to wait. Where the transfer can be paused without blocking anyone
/// (`pauseAt` set: Apple's URLSession, whose `suspend()` stops reading), the producer is told to pause
/// (``Push/pause``) once `pauseAt` bytes wait unread, and to resume (``Pull/chunk(_:resumeProducer:)``) once the reader
/// has drained them to a quarter of that. Without (`pauseAt` nil: FoundationNetworking, whose callbacks run on the
/// one queue every URLSession of the process shares, and whose `suspend()` restarts the request) the bytes are
/// buffered, and the stream ends at `limit` (``Push/overflow``). When the reader fell behind, what waits is handed
/// over in pieces of up to ``batchBytes``, so that catching up costs one wake-up per batch instead of one per network
/// read. Every method is a short critical section that returns what to do; resuming happens after it, outside the
/// lock.
struct StreamingBuffer: Sendable {
    /// What the producer must do after offering a chunk.
    enum Push {
        /// Nothing: the chunk was queued (or dropped after the end).
        case proceed
        /// Hand the chunk to the reader that waits for it.
        case deliver(CheckedContinuation<Data?, any Error>, Data)
        /// `pauseAt` bytes wait unread: pause the transfer until a pull says to resume it.
        case pause
        /// `limit` bytes wait unread: end the stream.
        case overflow
    }

    /// What the reader gets when it asks for the next chunk.
    enum Pull {
        /// A chunk; resume the paused transfer when `resumeProducer`.
        case chunk(Data, resumeProducer: Bool)
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
    /// How many unread bytes pause the transfer; nil when it is never paused.
    let pauseAt: Int?
    private var chunks: [Data] = []
    private var first = 0
    private var buffered = 0
    private var reader: CheckedContinuation<Data?, any Error>?
    private var producerPaused = false
    private var end: Result<Void, any Error>?

    /// - Parameters:
    ///   - limit: The most unread bytes held; the stream ends there.
    ///   - pauseAt: How many unread bytes pause the transfer (at most `limit`); nil to never pause it.
    init(limit: Int, pauseAt: Int?) {
        let limit = max(1, limit)
        self.limit = limit
        self.pauseAt = pauseAt.map { min(max(1, $0), limit) }
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
        guard let pauseAt, buffered >= pauseAt, !producerPaused else { return .proceed }
        producerPaused = true
        return .pause
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
            let resume = producerPaused && buffered <= (pauseAt ?? 0) / 4
            if resume { producerPaused = false }
            return .chunk(chunk, resumeProducer: resume)
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

    /// How ``finish(_:discarding:)`` went.
    enum Finish {
        /// The body had already ended: nothing to do.
        case alreadyEnded
        /// The body ends now; resume `reader` (if one waits) with the end.
        case ended(reader: CheckedContinuation<Data?, any Error>?)
    }

    /// Ends the body; what is still buffered stays readable unless `discarding` (the reader left). A paused transfer
    /// is not resumed: it has ended, or is being cancelled.
    mutating func finish(_ result: Result<Void, any Error>, discarding: Bool = false) -> Finish {
        guard end == nil else { return .alreadyEnded }
        end = result
        if discarding {
            chunks = []
            first = 0
            buffered = 0
        }
        defer { reader = nil }
        return .ended(reader: reader)
    }
}
