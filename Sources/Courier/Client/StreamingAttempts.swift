import Foundation

extension APIClient {
    /// The most bytes of a body the streamed path reads whole: an error's body, a decoded upload response, a
    /// `304`. The same bound as a buffered response's (``URLSessionTransport/defaultMaxResponseBytes``).
    static let collectedBodyLimit = URLSessionTransport.defaultMaxResponseBytes

    /// ``sendWithRetries(_:first:)`` for a streamed call: the same steps (adapt again for each retry, authorize,
    /// one refresh and resend after a `401`, the retry policy within the call's deadlines, events), with the
    /// response's head in place of the whole response.
    ///
    /// A retry is decided on the head: once an acceptable head has arrived, its body belongs to the caller and a
    /// failure while reading it is not retried. An unacceptable response's body is read (up to
    /// ``collectedBodyLimit``) for the retry policy and the error. A request whose ``TransportRequest/streamedBody``
    /// cannot be produced again is never sent twice: where a retry or a resend would need it, the call fails with
    /// ``APIError/invalidRequest(_:)`` and ``InvalidRequestReason/bodyNotReplayable``.
    func streamWithRetries(_ call: Call, first: TransportRequest) async throws -> StreamedExchange {
        guard call.authorization != nil else { return try await streamAttempts(call, first: first) }
        return try await EventScope.$current.withValue(EventScope(instrumentation, call.id)) {
            try await streamAttempts(call, first: first)
        }
    }

    private func streamAttempts(_ call: Call, first: TransportRequest) async throws -> StreamedExchange {
        let retries = call.adapted.retryBase(for: first)
        var authorization = call.authorization
        var attempt = 0
        var resends = 0
        while true {
            attempt += 1
            var sent = attempt == 1 ? first : try await adapt(retries)
            if let current = authorization {
                authorization = try await current.authorize(&sent, using: configuration.authorize)
            }
            let outcome: RetryContext.Outcome
            do {
                let head = try await streamOnce(sent, limits: call.limits, attempt: attempt, id: call.id)
                if configuration.acceptableStatusCodes.contains(head.statusCode) {
                    return StreamedExchange(request: sent, response: head, attempts: attempt, source: .network)
                }
                outcome = .response(try await head.collect(upTo: Self.collectedBodyLimit))
            } catch let error as APIError {
                outcome = .failure(error)
            }
            if case .response(let response) = outcome, response.statusCode == 401 {
                guard authorization != nil else { throw APIError.unauthorized(response) }
                authorization = try await authorization?.prepareResend(after: response)
                try Self.requireReplayable(sent)
                resends += 1
                continue
            }
            let context = RetryContext(
                request: sent, attempt: attempt - resends, outcome: outcome, now: configuration.currentDate())
            switch call.limits.allowing(configuration.retryPolicy.decision(for: context), now: deadlines.elapsed) {
            case .retry(let delay):
                try Self.requireReplayable(sent)
                instrumentation.count(.retry)
                instrumentation.emit(
                    call.id, .retryScheduled(attempt: attempt, delay: delay, reason: instrumentation.reason(outcome)))
                try await configuration.clock.sleep(for: delay)
            case .doNotRetry:
                switch outcome {
                case .response(let response):
                    return StreamedExchange(
                        request: sent, response: StreamedTransportResponse(response), attempts: attempt,
                        source: .network)
                case .failure(let error): throw error
                }
            }
        }
    }

    /// Fails when `request` carries a one-shot body that was already sent: the retry or resend cannot happen.
    private static func requireReplayable(_ request: TransportRequest) throws(APIError) {
        if let body = request.streamedBody, !body.isReplayable { throw .invalidRequest(.bodyNotReplayable) }
    }

    /// One streamed attempt: the attempt's timeout (cut to what is left of the call) bounds the wait for the head,
    /// and each wait for the next chunk of the body (not cut: the caller paces the reading), so that a server that
    /// sends the head and then falls silent fails the reader with ``APIError/timedOut(_:)`` instead of hanging it.
    /// The reading as a whole is bounded only by the call's `callTimeout`, when it has one (no wait for a chunk goes
    /// past the call's end): otherwise the caller paces it (and ends it by cancelling its task), and a download may
    /// take an hour as long as its bytes keep coming. An upload likewise: while a streamed request body is sent, the
    /// head's deadline restarts each time the transport reads a chunk of it (``SendingDeadline``).
    private func streamOnce(
        _ request: TransportRequest, limits: CallLimits, attempt: Int, id: CallID
    ) async throws -> StreamedTransportResponse {
        let transport = configuration.transport
        let start = instrumentation.attemptSent(request, attempt: attempt, id: id)
        let timeout = limits.nextWait(now: deadlines.elapsed)
        do {
            var head: StreamedTransportResponse
            if let body = request.streamedBody {
                let deadline = SendingDeadline(idle: limits.timeout, end: limits.end, scheduler: deadlines)
                var sending = request
                sending.streamedBody = body.observingSends { _ in deadline.bodyWasSent() }
                head = try await Deadline.run(deadline, timeoutError: .timedOut(timeout)) { [sending] in
                    try await transport.stream(sending)
                }
            } else {
                head = try await Deadline.run(TransportDeadline(timeout: timeout, scheduler: deadlines)) {
                    try await transport.stream(request)
                }
            }
            head.body = head.body.idleTimeout(
                limits.timeout, end: limits.end, callTimeout: limits.callTimeout, scheduler: deadlines)
            instrumentation.received(
                TransportResponse(statusCode: head.statusCode, headers: head.headers), attempt: attempt, since: start,
                id: id)
            return head
        } catch let error as APIError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw APIError.transport(.other, underlying: error)
        }
    }
}
