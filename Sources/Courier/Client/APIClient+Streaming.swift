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
        try await observeStreamed(request.fields) { id in
            try await self.performStreamed(request.fields, body: nil, id: id)
        }.streamedResponse
    }

    // MARK: The Streamed Path of a Call

    /// The steps of a streamed call, as `send(_:)` takes them, with `body` (when given) sent
    /// as the request's body.
    func performStreamed(_ request: RequestFields, body: StreamedBody?, contentType: String? = nil, id: CallID)
        async throws -> StreamedExchange
    {
        // 1. Build the request: bad input fails here, and nothing is sent. The upload's `Content-Type` is set after
        //    the headers were validated, so it is checked here by the same rule.
        if let contentType, !FieldValue.isValid(contentType) {
            throw APIError.invalidRequest(.invalidHeaderValue(name: "Content-Type"))
        }
        var prepared = try prepare(request)
        if let body {
            prepared.request.body = nil
            prepared.request.streamedBody = body
            if let contentType, !prepared.request.headers.contains("Content-Type") {
                prepared.request.headers["Content-Type"] = contentType
            }
        }
        let limits = CallLimits(
            timeout: request.timeout ?? configuration.timeout,
            callTimeout: request.callTimeout ?? configuration.callTimeout, now: deadlines.elapsed)
        // 2. Who is calling; the identity partitions the cache.
        let mayAuthorize = prepared.isTrusted || request.sendsCredentialsToAnyOrigin
        let authorization = mayAuthorize ? try await authorization(for: request, within: limits) : nil
        let adapted = try await adaptBeforeLookup(prepared.request)
        func callSending(_ outgoing: Outgoing) -> Call {
            Call(
                client: self, id: id, adapted: adapted, limits: limits, authorization: authorization,
                coalescing: .never, decoding: nil, outgoing: outgoing)
        }
        // 3. The cache answers, or says what to send and how to record the answer. 4. Never coalesced.
        let exchange: StreamedExchange
        switch try plan(
            adapted, policy: request.cachePolicy, defaultFreshness: request.defaultFreshness,
            partition: cachePartition(adapted, identity: authorization?.identity), id: id)
        {
        case .serve(let response, _):
            exchange = StreamedExchange(
                Exchange(request: adapted.request, response: response, attempts: 0, source: .cache))
        case .serveStale(let response, let revalidation):
            revalidateInBackground(callSending(revalidation))
            exchange = StreamedExchange(
                Exchange(request: adapted.request, response: response, attempts: 0, source: .staleWhileRevalidate))
        case .send(let outgoing):
            // 5. Record the answer: a 304 merges, a stored body is copied aside as it passes, unsafe invalidates.
            let call = callSending(outgoing)
            exchange = try await recordStreamed(
                try await streamWithRetries(call, first: outgoing.request), outgoing, call: call)
        }
        // 6. Check the status.
        guard configuration.acceptableStatusCodes.contains(exchange.response.statusCode) else {
            let whole = try await exchange.response.collect(upTo: Self.collectedBodyLimit)
            throw APIError.unacceptableStatus(whole)
        }
        return exchange
    }

    /// Step 5 for a streamed answer. A `304` and an invalidation need no body, so they reuse ``record(_:_:call:)``
    /// with the head; a response to store is stored when its body ends, if it fit ``ResponseCache/maxEntryBytes``.
    private func recordStreamed(_ exchange: StreamedExchange, _ outgoing: Outgoing, call: Call) async throws
        -> StreamedExchange
    {
        guard let cache = configuration.cache else { return exchange }
        let head = TransportResponse(statusCode: exchange.response.statusCode, headers: exchange.response.headers)
        switch outgoing.record {
        case .nothing:
            return exchange
        case .store(_, _, _?) where head.statusCode == 304, .invalidate:
            let whole = try await exchange.collected(upTo: Self.collectedBodyLimit)
            return StreamedExchange(try await record(whole, outgoing, call: call))
        case .store:
            // Nothing `no-store` would keep (an event stream asks so): copying it aside would be wasted.
            let noStore = [exchange.request.headers["Cache-Control"], head.headers["Cache-Control"]].contains {
                $0?.lowercased().contains("no-store") == true
            }
            let limit = cache.maxEntryBytes
            if noStore { return exchange }
            if let announced = head.headers["Content-Length"].flatMap(Int.init), announced > limit { return exchange }
            var teed = exchange
            teed.response.body = exchange.response.body.copyingAside(upTo: limit) { [self] body in
                let stored = Exchange(
                    request: exchange.request,
                    response: TransportResponse(statusCode: head.statusCode, headers: head.headers, body: body),
                    attempts: exchange.attempts, source: exchange.source)
                _ = try? await record(stored, outgoing, call: call)
            }
            return teed
        }
    }

    /// Runs one streamed call between its first and last event, as ``observe(_:perform:finish:)`` does for a
    /// buffered one: `requestFinished` is emitted when the head has arrived. Errors, the body's included, are
    /// redacted with the client's credentials.
    func observeStreamed(_ request: RequestFields, perform: (CallID) async throws -> StreamedExchange)
        async throws -> StreamedExchange
    {
        let call = instrumentation.begin()
        instrumentation.emit(call.id, .requestStarted(method: request.method, url: self.redactedURL(of: request)))
        do {
            var exchange =
                configuration.authenticator == nil
                ? try await perform(call.id)
                : try await EventScope.$current.withValue(EventScope(instrumentation, call.id)) {
                    try await perform(call.id)
                }
            instrumentation.finished(call, source: exchange.source, status: exchange.response.statusCode)
            exchange.response.body = redacting(exchange.response.body)
            return exchange
        } catch {
            let error = instrumentation.redaction.sanitized(error)
            instrumentation.failed(call, error)
            throw error
        }
    }

    /// The body with its errors made ``APIError``s and redacted, as the call's own errors are.
    private func redacting(_ body: ByteStream) -> ByteStream {
        let redaction = instrumentation.redaction
        return ByteStream(next: {
            do {
                return try await body.nextChunk()
            } catch is CancellationError {
                throw CancellationError()
            } catch let error as APIError {
                throw redaction.sanitized(error)
            } catch {
                throw redaction.sanitized(APIError.transport(.other, underlying: error))
            }
        })
    }
}
