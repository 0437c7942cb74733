import Foundation

extension APIClient {
    // MARK: Attempts

    /// Sends the call until it succeeds or the retry policy says stop. Runs inside the shared flight, so joiners
    /// never multiply attempts or refreshes.
    ///
    /// With an authorization, each attempt carries a valid credential and a `401` earns one refresh and one resend.
    /// The resend counts in ``APIResponse/attempts`` but not against the retry policy. The first attempt sends `first`
    /// as it is (adapters already applied); later ones adapt again, so signatures and timestamps are fresh.
    @inline(__always)
    nonisolated(nonsending) func sendWithRetries(_ call: Call, first: TransportRequest) async throws -> Exchange {
        // Bound again here: the flight may run in a task of its own, and its refreshes belong to its leader.
        // Only a call with a credential can refresh, so only it pays for binding the scope, in a function of its own
        // (Docs/Performance.md#task-locals).
        guard call.authorization != nil else { return try await attempts(call, first: first) }
        return try await attemptsInEventScope(call, first: first)
    }

    @inline(never)
    nonisolated(nonsending) func attemptsInEventScope(_ call: Call, first: TransportRequest) async throws
        -> Exchange
    {
        try await EventScope.$current.withValue(EventScope(instrumentation, call.id)) {
            try await attempts(call, first: first)
        }
    }

    @inline(never)
    nonisolated(nonsending) func attempts(_ call: Call, first: TransportRequest) async throws -> Exchange {
        // Only what crosses an `await` lives in this frame; the bookkeeping after each attempt runs in `afterAttempt`,
        // a plain function (Docs/Performance.md#async-frames).
        var loop = AttemptLoop(authorization: call.authorization)
        while true {
            loop.attempt += 1
            var sent = loop.attempt == 1 ? first : try await adapt(call.adapted.retryBase(for: first))
            if let current = loop.authorization {
                loop.authorization = try await current.authorize(&sent, using: configuration.authorize)
            }
            let outcome = try await sendOnce(sent, call: call, loop: &loop)
            switch afterAttempt(outcome, sent: sent, call: call, loop: &loop) {
            case .finish(let exchange):
                return exchange
            case .fail(let error):
                throw error
            case .resend(let rejected):
                loop.authorization = try await loop.authorization?.prepareResend(after: rejected)
            case .retry(let delay):
                try await configuration.clock.sleep(for: delay)
            }
        }
    }

    /// The retry loop's state between attempts.
    struct AttemptLoop {
        var authorization: Authorization?
        var attempt = 0
        /// Resends after a refreshed credential: they count as attempts, not against the retry policy.
        var resends = 0
        var timings = FlightTimings()
    }

    /// What the retry loop does after an attempt.
    enum NextStep {
        case finish(Exchange)
        case fail(APIError)
        /// Refresh the credential the server rejected, then send again.
        case resend(rejected: TransportResponse)
        case retry(after: Duration)
    }

    /// Decides what follows an attempt: an acceptable response or the retry policy's "stop" ends the flight, a
    /// rejected credential earns one refresh and resend, anything else may be retried after a delay.
    @inline(never)
    func afterAttempt(
        _ outcome: RetryContext.Outcome, sent: TransportRequest, call: Call, loop: inout AttemptLoop
    ) -> NextStep {
        resilience.record(outcome, of: sent, call: call)
        if case .response(let response) = outcome {
            if configuration.acceptableStatusCodes.contains(response.statusCode) {
                return .finish(
                    Exchange(
                        request: sent, response: response, attempts: loop.attempt, leader: call.id,
                        timings: loop.timings, asked: Self.asked(call, sent: sent),
                        bodyStream: call.streamed?.takeArrivingBody()))
            }
            if isCredentialRejected(response, authorized: loop.authorization != nil) {
                guard loop.authorization != nil else { return .fail(APIError.unauthorized(response)) }
                // The server did not act on the request: the one resend stays, if the body can be sent again.
                if let refusal = Self.refusalToResend(call) { return .fail(refusal) }
                loop.resends += 1
                return .resend(rejected: response)
            }
        }
        return retryDecision(outcome, sent: sent, call: call, loop: &loop)
    }

    /// Whether the call's own body can go out again; a one-shot body the caller gave is sent once.
    static func refusalToResend(_ call: Call) -> APIError? {
        guard let body = call.adapted.unadapted.streamedBody, !body.isReplayable else { return nil }
        return .invalidRequest(.bodyNotReplayable)
    }

    /// After an attempt that failed: the retry policy decides, within the call's deadlines. A request that may not be
    /// sent twice (an unsafe method without an `Idempotency-Key`) is never retried, whatever a custom policy says.
    @inline(never)
    func retryDecision(
        _ outcome: RetryContext.Outcome, sent: TransportRequest, call: Call, loop: inout AttemptLoop
    ) -> NextStep {
        let context = RetryContext(
            request: sent, attempt: loop.attempt - loop.resends, outcome: outcome, now: configuration.currentDate())
        let policy = configuration.retryPolicy
        let asked = policy.mayResend(sent) ? policy.decision(for: context) : .doNotRetry
        let decision = call.limits.allowing(asked, now: deadlines.elapsed)
        switch (decision, outcome) {
        case (.retry(let delay), _):
            if let refusal = Self.refusalToResend(call) { return .fail(refusal) }
            if let denied = resilience.deniedRetry(after: outcome, of: sent, attempt: loop.attempt, call: call) {
                return .fail(denied)
            }
            loop.timings.retryDelays.append(delay)
            instrumentation.count(.retry)
            call.emit(.retryScheduled(attempt: loop.attempt, delay: delay, reason: instrumentation.reason(outcome)))
            return .retry(after: delay)
        case (.doNotRetry, .response(let response)):
            return .finish(
                Exchange(
                    request: sent, response: response, attempts: loop.attempt, leader: call.id, timings: loop.timings,
                    asked: Self.asked(call, sent: sent)))
        case (.doNotRetry, .failure(let error)):
            return .fail(error)
        }
    }

    /// The request the flight was keyed on, for joiners to match the response's `Vary` against, when it is not the
    /// request sent (an adapter or an authorization changed it); `nil`, the common case, stores no second reference.
    static func asked(_ call: Call, sent: TransportRequest) -> TransportRequest? {
        call.outgoing.request.sharesStorage(with: sent) ? nil : call.outgoing.request
    }

    /// One attempt on the wire, bounded by the deadline, recorded in the loop's timings. Errors that are not
    /// ``APIError`` become ``APIError/transport(_:underlying:)`` of kind ``TransportFailure/other``; cancellation
    /// is thrown on.
    @inline(never)
    nonisolated(nonsending) func sendOnce(_ sent: TransportRequest, call: Call, loop: inout AttemptLoop)
        async throws
        -> RetryContext.Outcome
    {
        let attempt = loop.attempt
        let request: TransportRequest
        do throws(APIError) {
            request = try instrumentation.outgoing(sent, attempt: attempt, of: call)
        } catch {
            return .failure(error)
        }
        let grant: ResilienceGrant?
        do throws(APIError) { grant = try resilience.admit(request, attempt: attempt, call: call) } catch {
            return .failure(error)
        }
        let start = instrumentation.attemptSent(request, attempt: attempt, of: call)
        // The log and the deadlines keep one time, so the attempt's deadline counts from the time just read.
        let deadline = TransportDeadline(
            timeout: call.limits.nextWait(now: start), scheduler: deadlines, start: start)
        do {
            // The shapes differ here only: a buffered call reads the whole response, a streamed one its head.
            let response =
                call.streamed == nil
                ? try await resilience.send(
                    request, deadline: deadline, grant: grant, call: call, transport: configuration.transport)
                : try await streamedAttempt(request, call: call, timeout: deadline.timeout, grant: grant)
            instrumentation.received(response, attempt: attempt, since: start, of: call)
            loop.timings.record(attempt, of: request, response, duration: instrumentation.elapsedTime - start)
            return .response(response)
        } catch {
            let duration = instrumentation.elapsedTime - start
            loop.timings.record(attempt, of: request, nil, duration: duration)
            // A transport stopped by its own deadline may throw `CancellationError`: that is the timeout, unless the
            // caller (or the flight) was cancelled.
            if Self.isCancellation(error), !Task.isCancelled, duration >= deadline.timeout {
                return .failure(deadline.timeoutError)
            }
            guard let error = Self.attemptError(error) else { throw CancellationError() }
            return .failure(error)
        }
    }

    /// Whether `error` is a `CancellationError`, asked in a plain function; every async function of the library asks
    /// through it.
    ///
    /// `CancellationError` belongs to a module built for library evolution, so its size is read at run time. Cast to
    /// in an async function, or thrown as a typed error to one (`attemptError` was `throws(CancellationError)`), it
    /// needs a buffer of task memory, taken on every entry of the function: `sendOnce` took two per attempt (about
    /// 250 instructions), a streamed body's reader one per chunk (`Docs/Performance.md#async-frames`).
    @inline(never)
    static func isCancellation(_ error: any Error) -> Bool {
        error is CancellationError
    }

    /// An attempt's error as the retry policy sees it; `nil` for a cancellation, which the attempt throws on.
    @inline(never)
    static func attemptError(_ error: any Error) -> APIError? {
        switch error {
        case let error as APIError: return error
        case is CancellationError: return nil
        default: return .transport(.other, underlying: error)
        }
    }
}
