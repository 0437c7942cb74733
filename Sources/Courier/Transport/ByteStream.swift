import Foundation

/// Bytes that arrive over time, in chunks: the body of a streamed response or of a streamed upload.
///
/// A `ByteStream` is pulled: each chunk is produced when the reader asks for it, so a slow reader slows the
/// producer down instead of letting memory grow.
///
/// - Important: A stream is read once, by one iterator. Copies of a stream are the same stream, so the first
///   iterator made from any of them is its reader; every later one (after the first, or beside it in another task)
///   throws ``APIError/streamAlreadyRead`` from its first `next()`, instead of racing the reader for chunks.
///
/// ```swift
/// let response = try await transport.stream(request)
/// for try await chunk in response.body {
///     try handle.write(contentsOf: chunk)
/// }
/// ```
public struct ByteStream: AsyncSequence, Sendable {
    /// A chunk of bytes; never empty.
    public typealias Element = Data

    private let source: Source

    /// Creates a stream that calls `next` for each chunk until it returns `nil`.
    ///
    /// - Parameter next: Produces the next chunk, `nil` at the end; it may throw to end the stream with an
    ///   error. Empty chunks are skipped.
    public init(next: @escaping @Sendable () async throws -> Data?) {
        source = Source(next: next)
    }

    /// Creates a stream of one chunk (none when `data` is empty).
    ///
    /// - Parameter data: The whole body.
    public init(_ data: Data) {
        let remaining = Locked<Data?>(data.isEmpty ? nil : data)
        self.init(next: {
            remaining.withLock { chunk in
                defer { chunk = nil }; return chunk
            }
        })
    }

    /// Creates a stream over any asynchronous sequence of chunks.
    ///
    /// - Parameter chunks: The chunks, read once, in order.
    public init<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks) where Chunks.Element == Data {
        let iterator = IteratorBox(chunks.makeAsyncIterator())
        self.init(next: { try await iterator.next() })
    }

    /// A stream with no bytes.
    public static var empty: ByteStream { ByteStream(Data()) }

    /// Reads the rest of the stream into one `Data`.
    ///
    /// - Parameter limit: The most bytes to accept.
    /// - Returns: Every remaining byte.
    /// - Throws: ``APIError/responseTooLarge(limit:)`` once more than `limit` bytes arrive (the rest is not
    ///   read), or the error the stream ended with.
    public func collect(upTo limit: Int) async throws -> Data {
        var collected = Data()
        for try await chunk in self {
            guard chunk.count <= limit - collected.count else { throw APIError.responseTooLarge(limit: limit) }
            collected.append(chunk)
        }
        return collected
    }

    /// Returns the iterator that reads the chunks: the stream's one reader, or, when the stream already has one,
    /// an iterator whose `next()` throws ``APIError/streamAlreadyRead``.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(source: source, isReader: source.claim()) }

    /// Reads a ``ByteStream`` chunk by chunk.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let source: Source
        fileprivate let isReader: Bool

        /// The next non-empty chunk, or `nil` at the end of the stream.
        ///
        /// - Throws: ``APIError/streamAlreadyRead`` when another iterator is the stream's reader, or the error the
        ///   stream ended with.
        public mutating func next() async throws -> Data? {
            guard isReader else { throw APIError.streamAlreadyRead }
            return try await source.nextChunk()
        }
    }

    /// The next chunk, `nil` at the end, without claiming the stream: for Courier's own relays (an idle timeout, a
    /// copy kept aside for the cache), which are the one reader of the stream they wrap and are read through their
    /// own stream, which the caller's iterator claims.
    func nextChunk() async throws -> Data? {
        try await source.nextChunk()
    }
}

extension ByteStream {
    /// The producer behind a stream: a reference, so that every copy of the stream reads the same bytes once.
    ///
    /// It also knows whether an iterator has claimed the stream: checked once per iterator, never per chunk.
    fileprivate final class Source: Sendable {
        let next: @Sendable () async throws -> Data?
        private let hasReader = Locked(false)

        init(next: @escaping @Sendable () async throws -> Data?) { self.next = next }

        /// Makes the caller the stream's reader; `false` when another iterator already is.
        func claim() -> Bool {
            hasReader.withLock { hasReader in
                defer { hasReader = true }
                return !hasReader
            }
        }

        /// The next non-empty chunk, or `nil` at the end.
        func nextChunk() async throws -> Data? {
            while let chunk = try await next() {
                if !chunk.isEmpty { return chunk }
            }
            return nil
        }
    }

    /// Holds an iterator of an arbitrary sequence so that the stream's `next` closure can advance it.
    ///
    /// `@unchecked Sendable` because a stream has one reader (``ByteStream/makeAsyncIterator()`` enforces it, and
    /// Courier's relays read the stream they wrap from one task): calls to `next()` never overlap, so the iterator is
    /// never touched from two tasks at once.
    private final class IteratorBox<Iterator: AsyncIteratorProtocol>: @unchecked Sendable
    where Iterator.Element == Data {
        private var iterator: Iterator
        init(_ iterator: Iterator) { self.iterator = iterator }
        func next() async throws -> Data? { try await iterator.next() }
    }
}

@available(*, unavailable)
extension ByteStream.AsyncIterator: Sendable {}
