import Foundation

/// Bytes that arrive over time, in chunks: the body of a streamed response or of a streamed upload.
///
/// A `ByteStream` is pulled: each chunk is produced when the reader asks for it, so a slow reader slows the
/// producer down instead of letting memory grow. It is read once, by one reader at a time; iterate it from a
/// single task.
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

    /// Returns the iterator that reads the chunks.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(source: source) }

    /// Reads a ``ByteStream`` chunk by chunk.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let source: Source

        /// The next non-empty chunk, or `nil` at the end of the stream.
        public mutating func next() async throws -> Data? {
            while let chunk = try await source.next() {
                if !chunk.isEmpty { return chunk }
            }
            return nil
        }
    }
}

extension ByteStream {
    /// The producer behind a stream: a reference, so that every copy of the stream reads the same bytes once.
    fileprivate final class Source: Sendable {
        let next: @Sendable () async throws -> Data?
        init(next: @escaping @Sendable () async throws -> Data?) { self.next = next }
    }

    /// Holds an iterator of an arbitrary sequence so that the stream's `next` closure can advance it.
    ///
    /// `@unchecked Sendable` because a stream has one reader at a time (its documented contract): calls to
    /// `next()` never overlap, so the iterator is never touched from two tasks at once.
    private final class IteratorBox<Iterator: AsyncIteratorProtocol>: @unchecked Sendable
    where Iterator.Element == Data {
        private var iterator: Iterator
        init(_ iterator: Iterator) { self.iterator = iterator }
        func next() async throws -> Data? { try await iterator.next() }
    }
}

@available(*, unavailable)
extension ByteStream.AsyncIterator: Sendable {}
