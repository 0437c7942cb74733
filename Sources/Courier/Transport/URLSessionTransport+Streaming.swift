import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionTransport {
    /// How many unread response bytes a streamed exchange holds for a reader that falls behind: 64 MiB.
    ///
    /// FoundationNetworking cannot pause a transfer (`URLSessionTask.suspend()` restarts the request on Linux), and
    /// every URLSession of the process runs its callbacks on one shared queue, where waiting for a reader would stop
    /// every other request of the process. So on Linux the bytes are buffered without ever waiting, and a reader that
    /// falls this far behind ends the stream with ``APIError/responseTooLarge(limit:)`` instead of letting memory
    /// grow. For a consumer that may stop for long, use a transport with real back-pressure (the AsyncHTTPClient
    /// transport). On Apple platforms the transfer is suspended at ``streamPauseBytes`` long before this.
    public static let streamBufferBytes = 64 << 20

    /// How many unread response bytes suspend a streamed exchange's task until the reader drains them to a quarter,
    /// on Apple platforms: 4 MiB. (On Linux a task cannot be paused: see ``streamBufferBytes``.)
    public static let streamPauseBytes = 4 << 20

    /// Sends `request` and returns as soon as the response's head arrives; the body follows as it is read.
    ///
    /// The body is handed over through a buffer that pauses the transfer at ``streamPauseBytes`` (Apple platforms)
    /// and gives up at ``streamBufferBytes``: a reader that falls that far behind ends the stream with an error, so memory stays
    /// bounded whatever the body's size. A ``TransportRequest/streamedBody`` is
    /// written to a temporary file first and sent from there (see `spool`). On Linux it is always sent chunked, even when
    /// its length is known: FoundationNetworking hands libcurl a stream of unknown length, and libcurl then adds
    /// chunked framing to any `Content-Length` the request names, which no server should accept. A server that
    /// requires a length (some object stores do) needs a transport that sends one, such as the AsyncHTTPClient one. ``maxResponseBytes`` does not apply: a streamed body is never held whole (bound what
    /// you collect with ``ByteStream/collect(upTo:)``).
    ///
    /// Each streamed exchange uses a URLSession of its own, made from ``session``'s configuration. A redirect is followed (without credentials across
    /// origins), except a 307 or 308 of a request with a streamed body, which is returned as the response.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The status and header fields, with the body still arriving.
    /// - Throws: ``APIError/transport(_:underlying:)`` when the exchange failed before the head,
    ///   ``APIError/invalidResponse(reason:underlying:)`` for a `Content-Encoding` that URLSession cannot decode on
    ///   Linux, `CancellationError` when the calling task was cancelled. The body's stream throws the same kinds of
    ///   errors when the exchange fails later.
    public func stream(_ request: TransportRequest) async throws -> StreamedTransportResponse {
        try Task.checkCancellation()
        var urlRequest = Self.urlRequest(for: request)
        var spooled: SpoolFile?
        if let body = request.streamedBody {
            let file = try await Self.spool(body)
            spooled = file
            urlRequest.httpBody = nil
            urlRequest.httpBodyStream = InputStream(url: file.url)
            #if canImport(FoundationNetworking)
                // libcurl frames a body of unknown length as chunked even when the request names a length, and a
                // request with both is malformed (RFC 9112 §6.3): the length is left out, the body goes chunked.
                urlRequest.setValue(nil, forHTTPHeaderField: "Content-Length")
            #else
                if let length = body.length {
                    urlRequest.setValue(String(length), forHTTPHeaderField: "Content-Length")
                }
            #endif
        }
        // The stream holds the file open once the upload started, and removing it then only drops its name: it is
        // removed as soon as the first bytes are reported sent, and at the latest when the exchange ends here, so a
        // crash leaves it behind only while it is being written.
        defer { spooled?.remove() }
        var bodySent = request.streamedBody?.sendObserver
        if let spooled {
            bodySent = { [observer = bodySent] sent in
                spooled.remove()
                observer?(sent)
            }
        }
        let exchange = URLSessionStreamingExchange(
            request: urlRequest, origin: request.url, credentialHeaderNames: request.credentials.headerNames,
            bufferLimit: Self.streamBufferBytes, hasStreamedBody: request.streamedBody != nil, bodySent: bodySent)
        let head = try await exchange.start(configuration: session.configuration)
        return StreamedTransportResponse(
            statusCode: head.statusCode, headers: Self.headers(of: head), body: exchange.body())
    }

    /// Writes a streamed body to a temporary file, from which FoundationNetworking then reads it.
    ///
    /// Why not hand FoundationNetworking the chunks as they come: it reads a body stream synchronously, on the one
    /// queue that every URLSession of the process shares (swift-corelibs-foundation runs all sessions' work there),
    /// so waiting there for the next chunk stopped every request of the process until it came, and the task that
    /// produces it may need a thread that a request blocked on that queue holds. Seen here as a hang of the whole
    /// test suite. A file is read without waiting on anyone; the body costs disk, not memory.
    ///
    /// The file is the caller's data: it is created new (`O_CREAT | O_EXCL`, never through a name someone else made)
    /// with mode 0600, so that no other user of the machine can read it, and removed as soon as it is no longer
    /// needed. A body that does not deliver its declared length fails here, before anything is sent.
    static func spool(_ body: StreamedBody) async throws -> SpoolFile {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-upload-\(UUID().uuidString)")
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw APIError.transport(.other, underlying: NSError(domain: NSPOSIXErrorDomain, code: Int(errno)))
        }
        let file = SpoolFile(url)
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            defer { try? handle.close() }
            for try await chunk in try body.makeChunks() {
                try Task.checkCancellation()
                try handle.write(contentsOf: chunk)
            }
            return file
        } catch {
            file.remove()
            throw error
        }
    }

    // MARK: Content Codings

    /// The codings libcurl decodes by itself when URLSession asks for them (zlib, brotli and zstd builds).
    static let decodableCodings: Set<String> = ["identity", "gzip", "x-gzip", "deflate", "br", "zstd"]

    /// The first coding of the response's `Content-Encoding` that URLSession on Linux cannot decode, or `nil`.
    ///
    /// FoundationNetworking asks libcurl to decode every coding it knows, and libcurl fails a response in any other
    /// with "Unrecognized content encoding type": the body is then lost, with a message that does not say why.
    /// Apple's URLSession passes such a body through undecoded, so there is nothing to refuse there.
    static func undecodableCoding(of head: HTTPURLResponse) -> String? {
        undecodableCoding(inContentEncoding: head.value(forHTTPHeaderField: "Content-Encoding"))
    }

    /// ``undecodableCoding(of:)`` for a `Content-Encoding` value already read: a field lookup in an
    /// `HTTPURLResponse` compares names without regard to case, field by field, so a caller that needs the value
    /// for more than this reads it once.
    static func undecodableCoding(inContentEncoding field: String?) -> String? {
        #if canImport(FoundationNetworking)
            guard let field else { return nil }
            for coding in field.split(separator: ",") {
                let name = coding.trimmingCharacters(in: .whitespaces).lowercased()
                if !name.isEmpty, !decodableCodings.contains(name) { return name }
            }
        #endif
        return nil
    }

    /// The error for a response in a coding URLSession cannot decode: it names the coding.
    static func undecodableCodingError(_ coding: String) -> APIError {
        APIError.invalidResponse(
            reason:
                "the response's Content-Encoding \"\(coding)\" cannot be decoded by URLSession on Linux (libcurl "
                + "decodes only gzip, deflate, br and zstd); use a transport that passes the body through undecoded",
            underlying: nil)
    }
}

/// An upload's spool file, removed once: when the transport has started reading it, or when the exchange ends.
final class SpoolFile: Sendable {
    let url: URL
    private let isRemoved = Locked(false)

    init(_ url: URL) { self.url = url }

    func remove() {
        let wasRemoved = isRemoved.withLock { isRemoved in
            defer { isRemoved = true }
            return isRemoved
        }
        if !wasRemoved { unlink(url.path) }
    }
}
