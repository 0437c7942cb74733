import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionTransport {
    /// How many unread response bytes a streamed exchange holds before it stops reading from the network: 1 MiB.
    ///
    /// A reader slower than the network holds at most this much (plus one chunk of libcurl's, 16 KiB); the
    /// server is then held back by TCP.
    public static let streamBufferBytes = 1 << 20

    /// Sends `request` and returns as soon as the response's head arrives; the body follows as it is read.
    ///
    /// The body is handed over through a buffer of ``streamBufferBytes``: when the reader falls behind, the transport
    /// stops reading from the connection until it catches up, so memory stays bounded whatever the body's size.
    /// A ``TransportRequest/streamedBody`` is sent as it is produced. On Linux it is always sent chunked, even when
    /// its length is known: FoundationNetworking hands libcurl a stream of unknown length, and libcurl then adds
    /// chunked framing to any `Content-Length` the request names, which no server should accept. A server that
    /// requires a length (some object stores do) needs a transport that sends one, such as the AsyncHTTPClient one. ``maxResponseBytes`` does not apply: a streamed body is never held whole (bound what
    /// you collect with ``ByteStream/collect(upTo:)``).
    ///
    /// Each streamed exchange uses a URLSession of its own, made from ``session``'s configuration: FoundationNetworking
    /// can hold a transfer back only by blocking its session's callbacks (see the discussion in the source), so a slow
    /// reader must not share its session with other requests. A redirect is followed (without credentials across
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
        var pump: UploadPump?
        if let body = request.streamedBody {
            let chunks = try body.makeChunks()
            let uploadPump = UploadPump(onSent: { _ in })
            uploadPump.start(chunks)
            pump = uploadPump
            urlRequest.httpBody = nil
            urlRequest.httpBodyStream = PumpInputStream(uploadPump)
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
        let exchange = URLSessionStreamingExchange(
            request: urlRequest, origin: request.url, credentialHeaderNames: request.credentials.headerNames,
            bufferLimit: Self.streamBufferBytes, pump: pump, hasStreamedBody: pump != nil)
        do {
            let head = try await exchange.start(configuration: session.configuration)
            return StreamedTransportResponse(
                statusCode: head.statusCode, headers: Self.headers(of: head), body: exchange.body())
        } catch {
            pump?.cancel()
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
        #if canImport(FoundationNetworking)
            guard let field = head.value(forHTTPHeaderField: "Content-Encoding") else { return nil }
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
