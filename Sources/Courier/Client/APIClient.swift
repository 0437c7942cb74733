import Foundation

/// An HTTP API client that does less work on the wire: identical in-flight requests share one upstream
/// call, failed attempts are retried with backoff, and deadlines hold on every platform.
///
/// ```swift
/// let client = APIClient(baseURL: URL(string: "https://api.example.com")!)
/// let user = try await client.send(Request<User>.get("/users/42")).value
/// ```
///
/// The client is a `final class` with no mutable state of its own: its shared state lives in small
/// actors (such as the ``RequestCoalescer``), each with a short critical section, so concurrent calls
/// never queue behind one executor.
///
/// - Important: One client is meant to be shared by a whole app or service. It is safe to call from
///   any number of tasks at once; a caller that cancels leaves at once with `CancellationError`,
///   without disturbing other callers of the same shared request.
public final class APIClient: Sendable {
    /// The URL relative request paths are appended to.
    public let baseURL: URL
    /// The configuration the client was created with.
    public let configuration: Configuration

    /// `baseURL` as text without trailing slashes, so that building a URL does not re-read the base.
    let baseText: String
    /// Keeps the deadlines of every attempt with one timer.
    let deadlines: DeadlineScheduler
    /// Shares one flight among callers of the same request.
    let coalescer = RequestCoalescer<RequestKey, Exchange>()
    /// Background refreshes of stale responses served under `stale-while-revalidate`.
    let backgroundRefreshes = BackgroundRefreshes()
    /// Counters and events; see ``metrics`` and ``events``.
    let instrumentation: Instrumentation
    /// Who may receive the client's credentials, and what counts as one; see ``CredentialScope``.
    let scope: CredentialScope

    /// Creates a client.
    ///
    /// A relative request path is appended to the base URL's path. A query on the base URL is kept and sent with
    /// every relative request, before the request's own query: with `https://api.example.com/v1?tenant=acme`,
    /// `/users/42?page=2` is sent as `https://api.example.com/v1/users/42?tenant=acme&page=2`. A fragment on the
    /// base URL is dropped (fragments are never sent).
    ///
    /// - Parameters:
    ///   - baseURL: The URL relative request paths are appended to, such as `https://api.example.com/v1`.
    ///   - configuration: Transport, retries, adapters and the rest; see ``Configuration``.
    public init(baseURL: URL, configuration: Configuration = Configuration()) {
        self.baseURL = baseURL
        self.baseText = URLBuilder.baseText(of: baseURL)
        self.configuration = configuration
        self.deadlines = DeadlineScheduler(clock: configuration.clock)
        self.scope = CredentialScope(baseURL: baseURL, configuration: configuration)
        self.instrumentation = Instrumentation(
            log: EventLog(clock: configuration.clock), redaction: Redaction(scope.credentials))
    }

    // MARK: Sending Requests

    /// Sends a request and decodes the body of a successful response as `T`.
    ///
    /// The steps: build the URL and headers (bad input fails here, before anything is sent), answer from the
    /// ``ResponseCache`` or decide what to send (see ``CachePolicy``), join an identical request already in
    /// flight or start one, run adapters and send with retries, check the status, then decode in the caller's
    /// task. `Request<Data>` returns the body as it is.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The decoded value with the response metadata.
    /// - Throws: ``APIError`` for every failure, or `CancellationError` when the calling task is cancelled.
    @discardableResult
    public func send<T: Decodable>(_ request: Request<T>) async throws -> Response<T> {
        try await observe(request, perform: perform) { [decoder = configuration.decoder] exchange in
            exchange.makeResponse(
                value: try Self.decode(T.self, from: exchange.response, decoder: decoder))
        }
    }

    /// Sends a request whose response body is not needed, and checks its status.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The response metadata; its ``Response/data`` holds the body if there was one.
    /// - Throws: ``APIError`` for every failure, or `CancellationError` when the calling task is cancelled.
    @discardableResult
    public func send(_ request: Request<Void>) async throws -> Response<Void> {
        try await observe(request, perform: perform) { $0.makeResponse(value: ()) }
    }

    // MARK: The Path of One Call

    /// Everything but decoding: shared by both `send` overloads.
    private func perform<T>(_ request: Request<T>, id: RequestID) async throws -> Exchange {
        let prepared = try prepare(request)
        let limits = CallLimits(
            timeout: request.timeout ?? configuration.timeout,
            callTimeout: request.callTimeout ?? configuration.callTimeout, now: deadlines.elapsed)
        // The identity is fixed before anything else: it partitions the cache and the coalescing key, so two
        // users never share a response. Only a target that may receive the client's credentials gets one.
        let mayAuthorize = prepared.isTrusted || request.sendsCredentialsToAnyOrigin
        let authorization = mayAuthorize ? try await authorization(for: request, within: limits) : nil
        let partition = authorization?.identity
        // Adapters run once before the cache and the coalescer look: `Vary` and the key see what is sent.
        let adapted = try await adaptBeforeLookup(prepared.request)
        // The cache answers, or decides what is sent (possibly a conditional request); `absorb` records the
        // response in the cache inside the flight, once however many callers share it.
        let exchange = try await withCache(adapted, policy: request.cachePolicy, partition: partition, id: id) {
            [self] sent, absorb in
            let retries = adapted.retryBase(for: sent)
            guard !adapted.isPrivate,
                let key = coalescingKey(for: sent, policy: request.coalescing, partition: partition)
            else {
                return await absorb(
                    try await transmit(sent, retrying: retries, limits: limits, authorization: authorization, id: id))
            }
            // Each caller waits for the flight within its own deadline, joiners included; the flight goes on
            // for whoever is still waiting.
            let now = deadlines.elapsed
            let bound = RequestCoalescer<RequestKey, Exchange>.WaitBound(
                scheduler: deadlines, leading: limits.remaining(now: now), joining: limits.nextWait(now: now),
                error: { APIError.timedOut($0) })
            let coalesced = try await coalescer.run(key, bound: bound) { [self] in
                await absorb(
                    try await transmit(sent, retrying: retries, limits: limits, authorization: authorization, id: id))
            }
            var exchange = coalesced.value
            exchange.joined = coalesced.joined
            if coalesced.joined {
                instrumentation.count(.joined)
                instrumentation.emit(id, .joinedFlight(leader: exchange.leader ?? id))
            }
            return exchange
        }
        guard configuration.acceptableStatusCodes.contains(exchange.response.statusCode) else {
            throw APIError.unacceptableStatus(exchange.response)
        }
        return exchange
    }

    /// A request as built, and whether its target may receive the client's credentials.
    struct Prepared {
        var request: HTTPRequest
        var isTrusted: Bool
    }

    /// Builds the request that will be sent: URL, merged headers, encoded body. Throws before anything
    /// is sent when any part is malformed, the method included (a method that is not a token could smuggle a
    /// second request onto the connection). The credential fields of the default headers go only to a trusted
    /// origin (or with ``Request/sendsCredentialsToAnyOrigin``).
    func prepare<T>(_ request: Request<T>) throws(APIError) -> Prepared {
        try request.method.validate()
        let url = try URLBuilder.url(base: baseText, path: request.path, query: request.query)
        let isTrusted = !URLBuilder.isAbsolute(request.path) || scope.trusts(url)
        var headers = request.headers
        headers.addMissing(
            from: isTrusted || request.sendsCredentialsToAnyOrigin ? configuration.headers : scope.untrustedHeaders)
        var body: Data?
        switch request.body {
        case nil:
            break
        case .data(let data, let contentType)?:
            body = data
            if let contentType, !headers.contains("Content-Type") { headers["Content-Type"] = contentType }
        case .json(let value)?:
            do {
                body = try configuration.encoder.encode(value)
            } catch {
                throw .encodingFailed(error)
            }
            if !headers.contains("Content-Type") { headers["Content-Type"] = "application/json" }
        }
        try headers.validate()
        let built = HTTPRequest(
            method: request.method, url: url, headers: headers, body: body, credentials: scope.credentials)
        return Prepared(request: built, isTrusted: isTrusted)
    }

    private func coalescingKey(for request: HTTPRequest, policy: CoalescingPolicy, partition: String?) -> RequestKey? {
        switch policy {
        case .never: return nil
        case .always: break
        case .automatic:
            guard configuration.isCoalescingEnabled, request.method == .get || request.method == .head else {
                return nil
            }
        }
        return RequestKey(request, varyingOn: configuration.coalescingHeaders, partition: partition)
    }

    // MARK: Attempts

    /// Sends `request` until it succeeds or the retry policy says stop. Runs inside the shared flight,
    /// so joiners never multiply attempts or refreshes.
    ///
    /// With an `authorization`, each attempt carries a valid credential and a `401` earns one refresh
    /// and one resend. The resend counts in ``Response/attempts`` but not against the retry policy.
    ///
    /// - Parameters:
    ///   - first: The first attempt, adapters already applied.
    ///   - retries: What later attempts adapt again, so their signatures and timestamps are fresh.
    func transmit(
        _ first: HTTPRequest, retrying retries: HTTPRequest, limits: CallLimits, authorization: Authorization?,
        id: RequestID
    ) async throws -> Exchange {
        // Bound again here: the flight may run in a task of its own, and its refreshes belong to its leader.
        // Only a call with a credential can refresh, so only it pays for binding the scope.
        guard authorization != nil else {
            return try await attempts(first, retrying: retries, limits: limits, authorization: nil, id: id)
        }
        return try await EventScope.$current.withValue(EventScope(instrumentation, id)) {
            try await attempts(first, retrying: retries, limits: limits, authorization: authorization, id: id)
        }
    }

    private func attempts(
        _ first: HTTPRequest, retrying retries: HTTPRequest, limits: CallLimits, authorization: Authorization?,
        id: RequestID
    ) async throws -> Exchange {
        var authorization = authorization
        var attempt = 0
        var resends = 0
        while true {
            attempt += 1
            var sent = attempt == 1 ? first : try await adapt(retries)
            try await authorization?.authorize(&sent, using: configuration.authorize)
            let outcome: RetryContext.Outcome
            do {
                let response = try await send(
                    sent, timeout: limits.nextWait(now: deadlines.elapsed), attempt: attempt, id: id)
                if configuration.acceptableStatusCodes.contains(response.statusCode) {
                    return Exchange(request: sent, response: response, attempts: attempt, leader: id)
                }
                outcome = .response(response)
            } catch let error as APIError {
                outcome = .failure(error)
            }
            if case .response(let response) = outcome, response.statusCode == 401 {
                guard authorization != nil else { throw APIError.unauthorized(response) }
                try await authorization?.prepareResend(after: response)
                resends += 1
                continue
            }
            let context = RetryContext(
                request: sent, attempt: attempt - resends, outcome: outcome, now: configuration.currentDate())
            switch limits.allowing(configuration.retryPolicy.decision(for: context), now: deadlines.elapsed) {
            case .retry(let delay):
                instrumentation.count(.retry)
                instrumentation.emit(
                    id, .retryScheduled(attempt: attempt, delay: delay, reason: instrumentation.reason(outcome)))
                try await configuration.clock.sleep(for: delay)
            case .doNotRetry:
                switch outcome {
                case .response(let response):
                    return Exchange(request: sent, response: response, attempts: attempt, leader: id)
                case .failure(let error): throw error
                }
            }
        }
    }

    /// Runs the adapters in order; their failures become ``APIError/adapterFailed(_:)``. What they return is
    /// validated again, method and headers, since an adapter may change either.
    private func adapt(_ request: HTTPRequest) async throws -> HTTPRequest {
        try await adapt(request) { _, _, _ in }
    }

    /// Runs the adapters once before the cache lookup, noting whether one that declared nothing changed a
    /// header the cache and the key cannot see (the call is then private).
    private func adaptBeforeLookup(_ request: HTTPRequest) async throws -> Adapted {
        guard !configuration.adapters.isEmpty else { return Adapted(unadapted: request, request: request) }
        var isPrivate = false
        let adapted = try await adapt(request) { adapter, before, after in
            if !isPrivate, adapter.variesOn == nil, !scope.changesOnlyKeyedHeaders(before, after) { isPrivate = true }
        }
        return Adapted(unadapted: request, request: adapted, isPrivate: isPrivate)
    }

    private func adapt(
        _ request: HTTPRequest, observe: (any RequestAdapter, HTTPHeaders, HTTPHeaders) -> Void
    ) async throws -> HTTPRequest {
        var request = request
        for adapter in configuration.adapters {
            let before = request.headers
            do {
                request = try await adapter.adapt(request)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                throw APIError.adapterFailed(error)
            }
            observe(adapter, before, request.headers)
        }
        if !configuration.adapters.isEmpty {
            try request.method.validate()
            try request.headers.validate()
            // An adapter may replace the request wholesale; the client's policy still says what is a credential.
            request.credentials = scope.credentials
        }
        return request
    }

    /// One attempt on the wire, bounded by the deadline. Errors that are not ``APIError`` or
    /// cancellation become ``APIError/transport(_:underlying:)`` of kind ``TransportFailure/other``.
    private func send(_ request: HTTPRequest, timeout: Duration, attempt: Int, id: RequestID) async throws
        -> HTTPResponse
    {
        let transport = configuration.transport
        let start = instrumentation.attemptSent(request, attempt: attempt, id: id)
        do {
            let response = try await Deadline.run(timeout: timeout, scheduler: deadlines) {
                try await transport.send(request)
            }
            instrumentation.received(response, attempt: attempt, since: start, id: id)
            return response
        } catch let error as APIError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw APIError.transport(.other, underlying: error)
        }
    }

    // MARK: Decoding

    /// Decodes in the caller's task: never inside an actor, so a large body never blocks shared state.
    static func decode<T: Decodable>(_ type: T.Type, from response: HTTPResponse, decoder: JSONDecoder) throws(APIError)
        -> T
    {
        if let data = response.body as? T { return data }
        do {
            return try decoder.decode(T.self, from: response.body)
        } catch {
            throw .decodingFailed(type: String(describing: T.self), underlying: error, response: response)
        }
    }
}
