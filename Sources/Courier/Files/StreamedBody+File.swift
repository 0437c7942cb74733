import Foundation

extension StreamedBody {
    /// The size of the chunks a file is read in: large enough that a gigabyte is 16,384 reads, small enough that a
    /// chunk in flight is not worth counting against memory.
    static let fileChunkBytes = 64 << 10

    /// A body read from a file as it is sent, never held whole in memory; produced again from the start for a retry.
    ///
    /// The file is opened now, so that a file that does not exist or cannot be read fails here, before anything is
    /// sent; its length is its size now.
    ///
    /// ```swift
    /// let body = try StreamedBody.file(at: URL(fileURLWithPath: "/var/backups/db.tar"))
    /// ```
    ///
    /// - Parameter url: A `file:` URL.
    /// - Returns: The body.
    /// - Throws: ``APIError/fileAccess(_:)`` when the file cannot be opened for reading.
    public static func file(at url: URL) throws(APIError) -> StreamedBody {
        let length = try fileLength(of: url)
        return StreamedBody(length: length) { try fileChunks(of: url) }
    }

    /// The size of the file at `url`, after checking that it can be opened for reading.
    static func fileLength(of url: URL) throws(APIError) -> Int {
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            return Int(try handle.seekToEnd())
        } catch {
            throw APIError.file(.read, url, error)
        }
    }

    /// The bytes of the file at `url`, read chunk by chunk as they are pulled; the file is closed at its end, on an
    /// error, or when the stream is let go.
    static func fileChunks(of url: URL) throws(APIError) -> ByteStream {
        let reader: FileReader
        do {
            reader = FileReader(try FileHandle(forReadingFrom: url))
        } catch {
            throw APIError.file(.read, url, error)
        }
        return ByteStream(next: {
            do {
                return try reader.next()
            } catch {
                throw APIError.file(.read, url, error)
            }
        })
    }
}

/// Reads a file in chunks, closing it at the end or when released.
///
/// The reads are blocking, each of at most ``StreamedBody/fileChunkBytes``: a local disk answers in microseconds, so
/// they stay on the task that pulls the stream rather than paying a thread hop per chunk.
final class FileReader: Sendable {
    private let handle: Locked<FileHandle?>

    init(_ handle: FileHandle) {
        self.handle = Locked(handle)
    }

    func next() throws -> Data? {
        try handle.withLock { handle in
            guard let file = handle else { return nil }
            let chunk = try file.read(upToCount: StreamedBody.fileChunkBytes) ?? Data()
            if chunk.isEmpty {
                try? file.close()
                handle = nil
                return nil
            }
            return chunk
        }
    }

    deinit {
        handle.withLock { try? $0?.close() }
    }
}
