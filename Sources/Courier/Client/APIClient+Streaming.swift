import Foundation

extension APIClient {
    // MARK: Streaming Responses

    /// Sends a request and returns as soon as the response's status and header fields arrive; the body follows as
    /// an asynchronous sequence of chunks, never held whole in memory.
    ///
    /// The call goes through the same steps as `send(_:)`: adapters, authorization with one
    /// refresh and resend after a `401`, retries (decided on the head: once an acceptable head arrived, a failure
    /// while reading the body is the caller's to handle), deadlines (``APIRequest/timeout`` bounds the wait for the
    /// head, then each wait for the next chunk: a body that stalls that long fails with ``APIError/timedOut(_:)``;
    /// the reading as a whole is paced and ended by the caller), events and redaction.
    ///
    /// - Streamed calls are never coalesced: sharing one transfer would mean keeping every byte for the joiner that
    ///   reads slowest or arrives last, which is the memory a stream exists to save.
    /// - The cache answers a streamed `GET` as it answers any other (a stored body arrives as one chunk), and stores
    ///   what the network sends only when it fits the cache's ``ResponseCache/maxEntryBytes``: the body is copied
    ///   aside while it passes through, and dropped as soon as it grows past that limit.
    ///
    /// ```swift
    /// let response = try await client.stream(APIRequest<Data>.get("/exports/today.csv"))
    /// for try await chunk in response.body {
    ///     try file.write(contentsOf: chunk)
    /// }
    /// ```
    ///
    /// - Parameter request: The request to send; its value type is not decoded.
    /// - Returns: The head, with the body still arriving.
    /// - Throws: ``APIError`` for every failure before the head (an unacceptable status carries the response with
    ///   its body, read up to 64 MiB), or `CancellationError` when the calling task is cancelled.
    public func stream<Value>(_ request: APIRequest<Value>) async throws -> StreamedResponse {
        try await streamedExchange(request.fields, StreamedShape()).streamedResponse
    }

    // MARK: The Streamed Shapes

    /// A call of a streamed shape, through the one pipeline that `send(_:)` takes (see <doc:Architecture>): it starts,
    /// routes, sends with retries, records and ends exactly as a buffered call does. What differs is said by `shape`
    /// and the call carries: an acceptable response's body is handed over as it arrives (with its
    /// errors redacted), and an upload's body is produced while it is sent. A streamed call is never coalesced:
    /// sharing one transfer would mean keeping every byte for the joiner that reads slowest or arrives last, which is
    /// the memory a stream exists to save.
    func streamedExchange(_ request: RequestFields, _ shape: StreamedShape) async throws -> StreamedExchange {
        var request = request
        request.streamed = shape
        request.coalescing = .never
        // An unacceptable status always fails a streamed call: its ``StreamedResponse`` promises an acceptable one.
        request.throwsOnUnacceptableStatus = true
        let answer =
            switch try start(request, decodingOnce: nil) {
            case .answered(let answer): answer
            case .sending(let sending): try await self.answer(sending, request, decodingOnce: nil)
            }
        _ = finished(answer)
        var exchange = StreamedExchange(answer.exchange)
        exchange.response.body = redacting(exchange.response.body)
        return exchange
    }

    /// Step 7 for a response whose body is still arriving. An invalidation needs only the head; a response to store is
    /// copied aside as it passes and stored when its body ends, if it fits ``ResponseCache/maxEntryBytes`` and the
    /// cache's own rules (the one parser of `Cache-Control`) do not refuse it.
    @inline(never)  // the flight's frame holds no copy of what this needs
    nonisolated(nonsending) func recordArriving(_ exchange: Exchange, call: Call) async throws -> Exchange {
        let outgoing = call.outgoing
        guard let cache = configuration.cache, let arriving = exchange.bodyStream else { return exchange }
        let head = exchange.response
        switch outgoing.record {
        case .nothing:
            return exchange
        case .invalidate(let request, _):
            // Nothing is stored under `Content-Location`: that would need the body, which is the caller's.
            var headOnly = outgoing
            headOnly.record = .invalidate(request, partition: .none)
            _ = try await record(exchange, headOnly, call: call)
            return exchange
        case .store(_, _, let entry) where entry != nil && head.statusCode == 304:
            // A `304` the caller accepts as it is: merged as a buffered one is, its stored body served whole.
            var whole = exchange
            whole.response.body = try await arriving.collect(upTo: Self.collectedBodyLimit)
            return try await record(whole.withoutBodyStream, outgoing, call: call)
        case .store(let lookup, _, _):
            let refused =
                Freshness.forbidsStorage(CacheControl.parse(cacheControlOf: head.headers), status: head.statusCode)
                || Freshness.requestDirectives(lookup.headers).noStore
            let limit = cache.maxEntryBytes
            if refused { return exchange }
            if let announced = head.headers["Content-Length"].flatMap(Int.init), announced > limit { return exchange }
            let teed = arriving.copyingAside(upTo: limit) { [self] body in
                var stored = exchange.withoutBodyStream
                stored.response.body = body
                _ = storeIfThatIsAll(stored, outgoing, call: call)
            }
            return exchange.withBodyStream(teed)
        }
    }

    /// The body with its errors made ``APIError``s and redacted, as the call's own errors are.
    private func redacting(_ body: ByteStream) -> ByteStream {
        let redaction = instrumentation.redaction
        return ByteStream(next: {
            do {
                return try await body.nextChunk()
            } catch {
                throw Self.chunkError(error, redaction: redaction)
            }
        })
    }

    /// What a reader of a streamed body gets for a chunk's failure: a cancellation as it is, anything else as a
    /// redacted ``APIError``. A plain function: matched in the async closure, `CancellationError` (whose size is read
    /// at run time) took a buffer of task memory for every chunk read (`Docs/Performance.md#async-frames`).
    @inline(never)
    private static func chunkError(_ error: any Error, redaction: Redaction) -> any Error {
        if error is CancellationError { return error }
        if let error = error as? APIError { return redaction.sanitized(error) }
        return redaction.sanitized(APIError.transport(.other, underlying: error))
    }
}
