#if AsyncHTTPClient
    import AsyncHTTPClient
    import Courier
    import Foundation
    import NIOCore

    /// A response body as Courier reads it: AsyncHTTPClient's buffers as `Data`, its errors as Courier's.
    ///
    /// Each chunk is read from AsyncHTTPClient when the reader asks for it, and AsyncHTTPClient reads from the
    /// connection only while few buffers wait, so back-pressure is AsyncHTTPClient's own. When the sequence's iterator
    /// is released before the end (the reader stopped, or its task was cancelled), AsyncHTTPClient cancels the request
    /// and closes the connection.
    struct ResponseBodyChunks: AsyncSequence, Sendable {
        typealias Element = Data

        let body: HTTPClientResponse.Body
        /// The caller's URL, for the errors.
        let origin: URL
        /// Keeps the transport, and so its client, alive while the body is read.
        let owner: AsyncHTTPClientTransport

        func makeAsyncIterator() -> Iterator {
            Iterator(body: body.makeAsyncIterator(), origin: origin, owner: owner)
        }

        struct Iterator: AsyncIteratorProtocol {
            var body: HTTPClientResponse.Body.AsyncIterator
            let origin: URL
            let owner: AsyncHTTPClientTransport

            mutating func next() async throws -> Data? {
                do {
                    guard let buffer = try await body.next() else { return nil }
                    return Data(buffer)
                } catch {
                    throw AsyncHTTPClientTransport.translate(error, for: origin)
                }
            }
        }
    }

    /// A streamed request body as AsyncHTTPClient sends it: each `Data` chunk of a ``ByteStream`` as a `ByteBuffer`,
    /// read when AsyncHTTPClient is ready to write more.
    struct RequestBodyChunks: AsyncSequence, Sendable {
        typealias Element = ByteBuffer

        let chunks: ByteStream

        init(_ chunks: ByteStream) { self.chunks = chunks }

        func makeAsyncIterator() -> Iterator { Iterator(chunks: chunks.makeAsyncIterator()) }

        struct Iterator: AsyncIteratorProtocol {
            var chunks: ByteStream.AsyncIterator

            mutating func next() async throws -> ByteBuffer? {
                guard let chunk = try await chunks.next() else { return nil }
                return ByteBuffer(bytes: chunk)
            }
        }
    }

    extension Data {
        /// The buffer's readable bytes, copied in one go: `Data(buffer.readableBytesView)` went through the generic
        /// sequence initializer, about 1,600 instructions for a 221-byte body.
        init(_ buffer: ByteBuffer) {
            self = buffer.withUnsafeReadableBytes { Data($0) }
        }
    }
#endif
