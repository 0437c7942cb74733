import Foundation

extension APIClient {
    // MARK: Uploads

    /// Sends `body` as the request's body while it is produced, with progress, and decodes the response as `T`.
    ///
    /// The call takes the steps of `send(_:)` (adapters, authorization and one resend after a
    /// `401`, retries, deadlines, events, redaction) with two differences: it is never coalesced, and a retry or a
    /// resend happens only when the body can be produced again (``StreamedBody/isReplayable``); otherwise the call
    /// fails with ``APIError/invalidRequest(_:)`` and ``InvalidRequestReason/bodyNotReplayable`` rather than send a
    /// body it no longer has. ``TransferProgress/completedBytes`` counts the bytes handed to the transport, from 0
    /// again for each attempt.
    ///
    /// - Parameters:
    ///   - request: The request to send; its own ``APIRequest/body`` is replaced by `body`.
    ///   - body: The body to send.
    ///   - contentType: The `Content-Type` to send, unless the request's headers name one.
    /// - Returns: The transfer; its value is the decoded response.
    public func upload<T: Decodable & Sendable>(
        _ request: APIRequest<T>, body: StreamedBody, contentType: String? = nil
    ) -> Transfer<APIResponse<T>> {
        Transfer { [self] progress in
            let exchange = try await uploadExchange(request, body: body, contentType: contentType, progress: progress)
            return exchange.makeResponse(
                value: try Self.decode(T.self, from: exchange.response, decoder: configuration.decoder))
        }
    }

    /// Sends `body` as the request's body while it is produced, with progress, and checks the response's status.
    ///
    /// See ``upload(_:body:contentType:)-(APIRequest<T>,_,_)``.
    ///
    /// - Parameters:
    ///   - request: The request to send; its own ``APIRequest/body`` is replaced by `body`.
    ///   - body: The body to send.
    ///   - contentType: The `Content-Type` to send, unless the request's headers name one.
    /// - Returns: The transfer; its value is the response, with the body in ``APIResponse/data``.
    public func upload(_ request: APIRequest<Void>, body: StreamedBody, contentType: String? = nil)
        -> Transfer<APIResponse<Void>>
    {
        Transfer { [self] progress in
            try await uploadExchange(request, body: body, contentType: contentType, progress: progress)
                .makeResponse(value: ())
        }
    }

    /// Uploads a file, read from disk as it is sent.
    ///
    /// - Parameters:
    ///   - request: The request to send; its own ``APIRequest/body`` is replaced by the file.
    ///   - file: A `file:` URL.
    ///   - contentType: The `Content-Type` to send, unless the request's headers name one;
    ///     `application/octet-stream` by default.
    /// - Returns: The transfer; a file that does not exist or cannot be read fails it with
    ///   ``APIError/fileAccess(_:)`` before anything is sent.
    public func upload<T: Decodable & Sendable>(
        _ request: APIRequest<T>, fromFile file: URL, contentType: String = "application/octet-stream"
    ) -> Transfer<APIResponse<T>> {
        Transfer { [self] progress in
            let body = try StreamedBody.file(at: file)
            let exchange = try await uploadExchange(request, body: body, contentType: contentType, progress: progress)
            return exchange.makeResponse(
                value: try Self.decode(T.self, from: exchange.response, decoder: configuration.decoder))
        }
    }

    /// Uploads a `multipart/form-data` form, its files read from disk as they are sent.
    ///
    /// - Parameters:
    ///   - request: The request to send; its own ``APIRequest/body`` is replaced by the form.
    ///   - form: The form.
    /// - Returns: The transfer; a file of the form that cannot be read fails it with ``APIError/fileAccess(_:)``
    ///   before anything is sent.
    public func upload<T: Decodable & Sendable>(_ request: APIRequest<T>, form: MultipartForm)
        -> Transfer<APIResponse<T>>
    {
        Transfer { [self] progress in
            let body = try form.makeBody()
            let exchange = try await uploadExchange(
                request, body: body, contentType: form.contentType, progress: progress)
            return exchange.makeResponse(
                value: try Self.decode(T.self, from: exchange.response, decoder: configuration.decoder))
        }
    }

    /// The upload shape of the one pipeline: `body` is sent in place of the request's own and counted as the
    /// transport reads it (from 0 again for each attempt), and the response is read whole.
    private func uploadExchange<T>(
        _ request: APIRequest<T>, body: StreamedBody, contentType: String?, progress: ProgressReporter
    ) async throws -> Exchange {
        let shape = StreamedShape(upload: body, uploadContentType: contentType, progress: progress)
        return try await streamedExchange(request.fields, shape).collected(upTo: Self.collectedBodyLimit)
    }
}

extension StreamedBody {
    /// The same body, its bytes reported to `progress` as they are read, from 0 for each attempt. A one-shot body
    /// stays one-shot.
    func counted(by progress: ProgressReporter) -> StreamedBody {
        let length = self.length
        guard isReplayable else {
            let chunks = CountedOnce(self, progress: progress)
            return StreamedBody(length: length, chunks: ByteStream(next: { try await chunks.next() }))
        }
        return StreamedBody(length: length) { [self] in
            progress.restart(total: length)
            return try makeChunks().counting { progress.add($0) }
        }
    }
}

/// The counted chunks of a one-shot body, made on the first read rather than before, so that a body that is never
/// sent (the call failed before) is not used up.
private final class CountedOnce: Sendable {
    private let body: StreamedBody
    private let progress: ProgressReporter
    private let chunks = Locked<ByteStream?>(nil)

    init(_ body: StreamedBody, progress: ProgressReporter) {
        self.body = body
        self.progress = progress
    }

    func next() async throws -> Data? {
        let stream = try chunks.withLock { chunks in
            if let chunks { return chunks }
            progress.restart(total: body.length)
            let made = try body.makeChunks().counting { [progress] in progress.add($0) }
            chunks = made
            return made
        }
        return try await stream.nextChunk()
    }
}
