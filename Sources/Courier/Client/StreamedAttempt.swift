import Foundation

extension APIClient {
    /// The most bytes of a body a streamed call reads whole: an error's body, a decoded upload response, a `304`. The
    /// same bound as a buffered response's (``URLSessionTransport/defaultMaxResponseBytes``).
    static let collectedBodyLimit = URLSessionTransport.defaultMaxResponseBytes

    /// ``streamedHead(_:call:timeout:)`` through the resilience gates the attempt passed (``ClientResilience``).
    @inline(never)
    nonisolated(nonsending) func streamedAttempt(
        _ request: TransportRequest, call: Call, timeout: Duration, grant: ResilienceGrant?
    ) async throws -> TransportResponse {
        guard let grant else { return try await streamedHead(request, call: call, timeout: timeout) }
        return try await resilience.gated(grant, call: call) {
            try await self.streamedHead(request, call: call, timeout: timeout)
        }
    }

    /// The transport step of one attempt of a streamed call, inside the one retry loop (``sendWithRetries(_:first:)``).
    ///
    /// An acceptable response's body is left arriving, held by the call's ``StreamedShape`` for the exchange, and its head returned: from here the body is
    /// the caller's, and a failure while reading it is not retried. Any other response is read whole (up to
    /// ``collectedBodyLimit``), for the retry policy, the credential check and the error, as a buffered call's is.
    ///
    /// The attempt's timeout (cut to what is left of the call) bounds the wait for the head, and each wait for the
    /// next chunk of the body (not cut: the caller paces the reading), so that a server that sends the head and then
    /// falls silent fails the reader with ``APIError/timedOut(_:)`` instead of hanging it. The reading as a whole is
    /// bounded only by the call's `callTimeout`, when it has one. While an upload's body is sent, the head's deadline
    /// restarts each time the transport reads a chunk of it (``SendingDeadline``).
    @inline(never)
    nonisolated(nonsending) func streamedHead(
        _ request: TransportRequest, call: Call, timeout: Duration
    ) async throws -> TransportResponse {
        let limits = call.limits
        let transport = configuration.transport
        var head: StreamedTransportResponse
        if var body = request.streamedBody {
            if let progress = call.streamed?.progress { body = body.counted(by: progress) }
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
        let body = head.body.idleTimeout(
            limits.timeout, end: limits.end, callTimeout: limits.callTimeout, scheduler: deadlines)
        guard configuration.acceptableStatusCodes.contains(head.statusCode) else {
            head.body = body
            return try await head.collect(upTo: Self.collectedBodyLimit)
        }
        call.streamed?.hold(body)
        return TransportResponse(statusCode: head.statusCode, headers: head.headers)
    }
}
