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
        self.instrumentation = Instrumentation(
            log: EventLog(clock: configuration.clock),
            redaction: Redaction(
                headers: configuration.redactedHeaders, queryParameters: configuration.redactedQueryParameters))
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
        let timeout = request.timeout ?? configuration.timeout
        let coalescing = request.coalescing
        // The identity is fixed before anything else: it partitions the cache and the coalescing key, so two
        // users never share a response.
        let authorization = try await authorization(for: request)
        let partition = authorization?.identity
        // The cache answers, or decides what is sent (possibly a conditional request); `absorb` records the
        // response in the cache inside the flight, once however many callers share it.
        let exchange = try await withCache(prepared, policy: request.cachePolicy, partition: partition, id: id) {
            [self] sent, absorb in
            guard let key = coalescingKey(for: sent, policy: coalescing, partition: partition) else {
                return await absorb(try await transmit(sent, timeout: timeout, authorization: authorization, id: id))
            }
            let coalesced = try await coalescer.run(key) { [self] in
                await absorb(try await transmit(sent, timeout: timeout, authorization: authorization, id: id))
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

    /// Builds the request that will be sent: URL, merged headers, encoded body. Throws before anything
    /// is sent when any part is malformed, the method included (a method that is not a token could smuggle a
    /// second request onto the connection).
    func prepare<T>(_ request: Request<T>) throws(APIError) -> HTTPRequest {
        try request.method.validate()
        let url = try URLBuilder.url(base: baseText, path: request.path, query: request.query)
        var headers = request.headers
        headers.addMissing(from: configuration.headers)
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
        return HTTPRequest(method: request.method, url: url, headers: headers, body: body)
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
    func transmit(_ request: HTTPRequest, timeout: Duration, authorization: Authorization?, id: RequestID)
        async throws -> Exchange
    {
        // Bound again here: the flight may run in a task of its own, and its refreshes belong to its leader.
        // Only a call with a credential can refresh, so only it pays for binding the scope.
        guard authorization != nil else {
            return try await attempts(request, timeout: timeout, authorization: nil, id: id)
        }
        return try await EventScope.$current.withValue(EventScope(instrumentation, id)) {
            try await attempts(request, timeout: timeout, authorization: authorization, id: id)
        }
    }

    private func attempts(_ request: HTTPRequest, timeout: Duration, authorization: Authorization?, id: RequestID)
        async throws -> Exchange
    {
        var authorization = authorization
        var attempt = 0
        var resends = 0
        while true {
            attempt += 1
            var sent = try await adapt(request)
            try await authorization?.authorize(&sent, using: configuration.authorize)
            let outcome: RetryContext.Outcome
            do {
                let response = try await send(sent, timeout: timeout, attempt: attempt, id: id)
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
            switch configuration.retryPolicy.decision(for: context) {
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
        var request = request
        for adapter in configuration.adapters {
            do {
                request = try await adapter.adapt(request)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                throw APIError.adapterFailed(error)
            }
        }
        if !configuration.adapters.isEmpty {
            try request.method.validate()
            try request.headers.validate()
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
