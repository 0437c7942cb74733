import Foundation

extension APIClient {
    // MARK: Downloads

    /// Downloads the response body into a file, chunk by chunk, with progress.
    ///
    /// The body is written to a temporary file next to `destination` and moved into place (replacing what is there)
    /// only once it is complete. A download that fails or is cancelled removes its temporary file and leaves
    /// `destination` as it was. Memory stays bounded whatever the size (the transport's buffer plus one chunk).
    /// A server that stops sending for the request's ``APIRequest/timeout`` fails the download with
    /// ``APIError/timedOut(_:)``; a download that keeps receiving bytes may take as long as it needs.
    ///
    /// The call takes the steps of ``stream(_:)``: adapters, authorization and one resend after a `401`, retries
    /// decided on the head, the cache (a stored body is written out like a fresh one, and a body within
    /// ``ResponseCache/maxEntryBytes`` is stored), events and redaction. It is not coalesced.
    ///
    /// ```swift
    /// let destination = URL(fileURLWithPath: "/var/cache/app/catalog.json")
    /// let download = client.download(APIRequest<Void>.get("/catalog"), to: destination)
    /// let response = try await download.value  // response.value == destination
    /// ```
    ///
    /// - Parameters:
    ///   - request: The request to send; its value type is not decoded.
    ///   - destination: A `file:` URL; its directory must exist and be writable.
    /// - Returns: The transfer; its value is the response, whose ``APIResponse/value`` is `destination`.
    public func download<Value>(_ request: APIRequest<Value>, to destination: URL) -> Transfer<APIResponse<URL>> {
        Transfer { [self, request] progress in
            // The destination's directory is checked first: nothing is sent for a download that cannot be kept.
            let file = try PartialFile(for: destination)
            do {
                let exchange = try await streamedExchange(request.fields, StreamedShape())
                let head = exchange.response
                progress.restart(total: head.headers["Content-Length"].flatMap(Int.init))
                for try await chunk in head.body {
                    try file.write(chunk)
                    progress.add(chunk.count)
                }
                try file.moveIntoPlace()
                let answer = Exchange(
                    request: exchange.request,
                    response: TransportResponse(statusCode: head.statusCode, headers: head.headers),
                    attempts: exchange.attempts, source: exchange.source)
                return APIResponse(value: destination, head: ResponseHead(answer))
            } catch {
                file.discard()
                throw error
            }
        }
    }
}

/// The temporary file a download is written to: in the destination's directory, so that the final move is a
/// rename within one file system (atomic, never a copy), and named so that it is never mistaken for the result.
final class PartialFile: Sendable {
    private let url: URL
    private let destination: URL
    private let handle: Locked<FileHandle?>

    /// Creates the temporary file.
    /// - Throws: ``APIError/fileAccess(_:)`` when it cannot be created (no such directory, no permission).
    init(for destination: URL) throws(APIError) {
        self.destination = destination
        let directory = destination.deletingLastPathComponent()
        url = directory.appendingPathComponent(".\(destination.lastPathComponent).\(UUID().uuidString).download")
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw APIError.file(
                .write, destination,
                CocoaError(
                    .fileWriteNoPermission,
                    userInfo: [
                        NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(errno))
                    ]))
        }
        do {
            handle = Locked(try FileHandle(forWritingTo: url))
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw APIError.file(.write, destination, error)
        }
    }

    func write(_ chunk: Data) throws(APIError) {
        do {
            try handle.withLock { try $0?.write(contentsOf: chunk) }
        } catch {
            throw APIError.file(.write, destination, error)
        }
    }

    /// Closes the file and renames it to the destination, replacing what is there.
    func moveIntoPlace() throws(APIError) {
        do {
            try close()
            if rename(url.path, destination.path) != 0 {
                throw NSError(domain: NSPOSIXErrorDomain, code: Int(errno))
            }
        } catch {
            discard()
            throw APIError.file(.write, destination, error)
        }
    }

    /// Closes and removes the temporary file.
    func discard() {
        try? close()
        try? FileManager.default.removeItem(at: url)
    }

    private func close() throws {
        try handle.withLock { handle in
            defer { handle = nil }
            try handle?.close()
        }
    }
}
