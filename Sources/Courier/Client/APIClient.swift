import Foundation

/// An HTTP API client that does less work on the wire: identical in-flight requests share one upstream
/// call, failed attempts are retried with backoff, and deadlines hold on every platform.
///
/// ```swift
/// let client = APIClient(baseURL: URL(string: "https://api.example.com")!)
/// let user = try await client.send(APIRequest<User>.get("/users/42")).value
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

    /// `baseURL` split into path and query once, so that building a URL does not re-read the base.
    let base: URLBuilder.Base
    /// URLs this client built lately, so that calling one again does not parse it again.
    let recentURLs = RecentURLs()
    /// Keeps the deadlines of every attempt with one timer.
    let deadlines: DeadlineScheduler
    /// Shares one flight among callers of the same request.
    let coalescer = RequestCoalescer<RequestKey, Exchange>()
    /// The requests in flight in each latest-wins slot; see ``LatestWins``.
    let latestWinsSlots = LatestWinsSlots()
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
        self.base = URLBuilder.Base(baseURL)
        self.configuration = configuration
        self.scope = CredentialScope(baseURL: baseURL, configuration: configuration)
        let log = EventLog(clock: configuration.clock)
        self.deadlines = DeadlineScheduler(clock: configuration.clock, stopwatch: log.stopwatch)
        self.instrumentation = Instrumentation(
            log: log, redaction: Redaction(scope.credentials), observers: configuration.observers)
    }

    // MARK: Sending Requests

    /// Sends a request and decodes the body of a successful response as `T`.
    ///
    /// The steps: build the URL and headers (bad input fails here, before anything is sent), answer from the
    /// ``ResponseCache`` or decide what to send (see ``CachePolicy``), join an identical request already in
    /// flight or start one, run adapters and send with retries, check the status, then decode in the caller's
    /// task. `APIRequest<Data>` returns the body as it is.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The decoded value with the response metadata.
    /// - Throws: ``APIError`` for every failure, or `CancellationError` when the calling task is cancelled.
    @inlinable @discardableResult
    public func send<T: Decodable>(_ request: APIRequest<T>) async throws -> APIResponse<T> {
        // Inlined into the caller's module and specialized for `T`, so that no step looks up the metadata of
        // `APIResponse<T>` at run time (four lookups, about 1,700 instructions per call). The request's fields are
        // handed on as they are: nothing but the decoding depends on `T`, and the path of the call is not generic
        // and stays in this module.
        let decoder = decoder(for: request.fields)
        // A fresh hit is answered by `start` itself, without a suspension point.
        let answer =
            switch try start(request.fields, decodingOnce: nil) {
            case .answered(let answer): answer
            case .sending(let sending): try await answer(sending, request.fields, decodingOnce: nil)
            }
        return APIResponse(value: try value(of: answer, as: T.self, decoder: decoder), head: finished(answer))
    }

    /// Sends a request and decodes the body of a successful response as `T`, once for every caller that shares the
    /// call: joiners that ask for the same type with the same decoder get the value the flight decoded.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The decoded value with the response metadata.
    /// - Throws: ``APIError`` for every failure, or `CancellationError` when the calling task is cancelled.
    @inlinable @discardableResult
    public func send<T: Decodable & Sendable>(_ request: APIRequest<T>) async throws -> APIResponse<T> {
        let decoder = decoder(for: request.fields)
        // `Data` needs no decoding: sharing it would only box it.
        let shared = T.self == Data.self ? nil : SharedDecoding(T.self, decoder: decoder)
        // A fresh hit is answered by `start` itself, without a suspension point.
        let answer =
            switch try start(request.fields, decodingOnce: shared) {
            case .answered(let answer): answer
            case .sending(let sending): try await answer(sending, request.fields, decodingOnce: shared)
            }
        return APIResponse(value: try sharedValue(of: answer, as: T.self, decoder: decoder), head: finished(answer))
    }

    /// Sends a request whose response body is not needed, and checks its status.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The response metadata; its ``APIResponse/data`` holds the body if there was one.
    /// - Throws: ``APIError`` for every failure, or `CancellationError` when the calling task is cancelled.
    @discardableResult
    public func send(_ request: APIRequest<Void>) async throws -> APIResponse<Void> {
        let answer =
            switch try start(request.fields, decodingOnce: nil) {
            case .answered(let answer): answer
            case .sending(let sending): try await answer(sending, request.fields, decodingOnce: nil)
            }
        return APIResponse(value: (), head: finished(answer))
    }

    // MARK: The Path of One Call

    /// Everything but the caller's own decoding, step by step; shared by the `send` overloads.
    ///
    /// This and the other async steps of a call are `nonisolated(nonsending)`: they run on the executor of the public
    /// `send` that called them. A plain nonisolated async function checks its executor on entry
    /// (`swift_task_switch`, which reads the task's executor preference under its status lock), about 300
    /// instructions each time; measured over a call with the cache off, 27,500 → 25,800 instructions.
    nonisolated(nonsending) func perform(_ request: RequestFields, id: CallID, decodingOnce shared: SharedDecoding?)
        async throws -> Exchange
    {
        // 1–3. Build the request, learn who is calling, and ask the cache: an answer, or a call to send. Without an
        //      authenticator or adapters nothing in these steps waits, and they run as a plain function.
        let route =
            stepsBeforeSendingWait
            ? try await routeAuthorizing(request, id: id, decoding: shared)
            : try route(request, id: id, decoding: shared)
        return try await send(route, for: request)
    }

    /// Steps 4–6 of a call whose steps 1–3 gave `route`.
    nonisolated(nonsending) func send(_ route: Route, for request: RequestFields) async throws -> Exchange {
        let exchange: Exchange
        switch route {
        case .answered(let answer):
            exchange = answer
        case .send(let call) where call.outgoing.fallback == nil:
            // 4–5. Share one flight with identical callers, or send alone; the flight records the answer.
            exchange = try await sendShared(call)
        case .send(let call):
            // The same, with a stored response that may stand in when the server fails. (Apart, so that the common
            // call's task does not hold the frame of the error handling.)
            exchange = try await sendServingStaleOnError(call)
        }
        // 6. Check the status, unless the caller reads every status itself; the caller decodes.
        return try checked(exchange, for: request)
    }

    /// The exchange, unless its status is not acceptable and the caller does not read every status itself.
    func checked(_ exchange: Exchange, for request: RequestFields) throws -> Exchange {
        let isAcceptable = configuration.acceptableStatusCodes.contains(exchange.response.statusCode)
        guard isAcceptable || !request.throwsOnUnacceptableStatus else {
            throw unacceptableStatusError(exchange.response, for: request)
        }
        return exchange
    }

    /// Whether steps 1–3 may wait: an authenticator may refresh its credential, and adapters are async. Without
    /// either they run as a plain function (``route(_:id:decoding:)``).
    var stepsBeforeSendingWait: Bool {
        configuration.authenticator != nil || !configuration.adapters.isEmpty
    }

    /// Where step 3 leads: an answer from the cache, or a call to send.
    enum Route {
        case answered(Exchange)
        case send(Call)
    }

    /// Steps 1–3 for a client without an authenticator or adapters, where none of them waits.
    @inline(never)  // its values stay on the thread's stack, off the async frame of `perform`
    func route(_ request: RequestFields, id: CallID, decoding shared: SharedDecoding?) throws(APIError)
        -> Route
    {
        // 1. Build the request: bad input fails here, and nothing is sent.
        let prepared = try prepare(request)
        let adapted = Adapted(unadapted: prepared.request, request: prepared.request, sharingKey: prepared.sharingKey)
        // 3. The cache answers, or says what to send and how to record the answer.
        return try route(request, adapted, limits: limits(of: request), authorization: nil, id: id, decoding: shared)
    }

    /// Steps 1–3 with an authenticator or adapters.
    @inline(never)
    private nonisolated(nonsending) func routeAuthorizing(
        _ request: RequestFields, id: CallID, decoding shared: SharedDecoding?
    ) async throws -> Route {
        // 1. Build the request: bad input fails here, and nothing is sent.
        let prepared = try prepare(request)
        let limits = limits(of: request)
        // 2. Who is calling: the identity partitions the cache and the coalescing key, so two users never share a
        //    response. Only a target that may receive the client's credentials gets one.
        let mayAuthorize =
            configuration.authenticator != nil && (prepared.isTrusted || request.sendsCredentialsToAnyOrigin)
        let authorization = mayAuthorize ? try await authorization(for: request, within: limits) : nil
        // Adapters run once before the cache and the coalescer look, so `Vary` and the key see what is sent.
        let adapted =
            configuration.adapters.isEmpty
            ? Adapted(unadapted: prepared.request, request: prepared.request, sharingKey: prepared.sharingKey)
            : try await adaptBeforeLookup(prepared.request)
        // 3. The cache answers, or says what to send and how to record the answer.
        return try route(request, adapted, limits: limits, authorization: authorization, id: id, decoding: shared)
    }

    /// The call's deadlines, starting now.
    private func limits(of request: RequestFields) -> CallLimits {
        CallLimits(
            timeout: request.timeout ?? configuration.timeout,
            callTimeout: request.callTimeout ?? configuration.callTimeout, now: deadlines.elapsed)
    }

    /// Step 3: asks the cache's plan and turns it into an answer or a call to send (a stale answer also starts its
    /// background revalidation). Synchronous and not inlined, so that the plan's values stay on the thread's stack
    /// and out of the async frame of ``perform(_:id:decodingOnce:)``: a caller's task holds that frame while it waits,
    /// and a frame past the task's first slab of memory costs an allocation on every call.
    @inline(never)
    private func route(
        _ request: RequestFields, _ adapted: Adapted, limits: CallLimits, authorization: Authorization?, id: CallID,
        decoding shared: SharedDecoding?
    ) throws(APIError) -> Route {
        func call(_ outgoing: Outgoing, decoding: SharedDecoding?) -> Call {
            Call(
                client: self, id: id, adapted: adapted, limits: limits, authorization: authorization,
                coalescing: request.coalescing, decoding: decoding, outgoing: outgoing)
        }
        switch try plan(
            adapted, policy: request.cachePolicy, defaultFreshness: request.defaultFreshness,
            partition: cachePartition(adapted, identity: authorization?.identity), id: id, decoding: shared)
        {
        case .serve(let response, let decoded):
            return .answered(
                Exchange(request: adapted.request, response: response, attempts: 0, source: .cache, decoded: decoded))
        case .serveStale(let response, let revalidation):
            revalidateInBackground(call(revalidation, decoding: nil))
            return .answered(
                Exchange(request: adapted.request, response: response, attempts: 0, source: .staleWhileRevalidate))
        case .send(let outgoing):
            return .send(call(outgoing, decoding: shared))
        }
    }

    /// ``sendShared(_:)``, with the stored response standing in when the server fails and the response allows it
    /// (`stale-if-error`, RFC 5861 §4).
    @inline(never)  // its error handling stays off the async frame of `perform`
    private nonisolated(nonsending) func sendServingStaleOnError(_ call: Call) async throws -> Exchange {
        let exchange: Exchange
        do {
            exchange = try await sendShared(call)
        } catch let error as APIError where error.allowsStaleIfError {
            guard let stale = staleIfError(call.outgoing.fallback, call.adapted.request) else { throw error }
            return stale
        }
        guard exchange.response.statusCode >= 500,
            let stale = staleIfError(call.outgoing.fallback, call.adapted.request, attempts: exchange.attempts)
        else { return exchange }
        return stale
    }

    /// Sends the call's outgoing request in a flight that identical callers join (each within its own deadline), or
    /// alone when the call cannot be shared. The flight sends with retries, records the answer in the cache and
    /// decodes it once (``runFlight(_:)``).
    private nonisolated(nonsending) func sendShared(_ call: Call) async throws -> Exchange {
        guard let key = sharingKey(for: call) else { return try await runFlight(call) }
        // The call gives its bound when it registers (``Call/waitBound()``), off this frame.
        let coalesced = try await coalescer.run(key, tag: call.id.rawValue, operation: call)
        // A joiner whose own request differs from the leader's in a field the response varies on (one the key
        // ignores) is not served from the flight: it sends alone.
        if coalesced.joined, !coalesced.value.serves(call.outgoing.request) { return try await runFlight(call) }
        return joined(coalesced, call: call)
    }

    /// The key under which identical calls share a flight; `nil` when the call cannot be shared.
    @inline(never)  // keeps the key's temporaries off the async frame of `sendShared`
    private func sharingKey(for call: Call) -> RequestKey? {
        guard !call.adapted.isPrivate else { return nil }
        // The key built with the request serves while the request is sent as built: not for a conditional request,
        // and not for a caller whose identity partitions it.
        let known =
            call.partition == nil && call.outgoing.request.sharesStorage(with: call.adapted.request)
            ? call.adapted.sharingKey : nil
        return coalescingKey(
            for: call.outgoing.request, policy: call.coalescing, partition: call.partition, known: known,
            ignoring: call.adapted.ignoredHeaders)
    }

    /// How long the call waits for a flight it leads, or joins: what is left of the call, and its next wait.
    func waitBound(for call: Call) -> WaitBound {
        WaitBound(
            scheduler: deadlines, leading: call.limits.remaining(now: self.deadlines.elapsed),
            joining: call.limits.nextWait(now: self.deadlines.elapsed), error: { APIError.timedOut($0) })
    }

    /// The flight's exchange as this caller got it, counted and reported when the caller joined another's flight.
    @inline(never)  // keeps the event's temporaries off the async frame of `sendShared`
    private func joined(_ coalesced: Coalesced<Exchange>, call: Call) -> Exchange {
        var exchange = coalesced.value
        exchange.joined = coalesced.joined
        if coalesced.joined {
            instrumentation.count(.joined)
            instrumentation.emit(call.id, .joinedFlight(leader: exchange.leader ?? call.id))
        }
        return exchange
    }

    /// The work of one flight, however many callers share it: send with retries, record the answer in the cache,
    /// decode it once for the callers that share decoding.
    @inline(never)  // called from the flight's task and, unshared, from `sendShared`: neither carries its frame
    nonisolated(nonsending) func runFlight(_ call: Call) async throws -> Exchange {
        // The outgoing request is read from the call, not copied: this frame lives in the flight task beside the retry
        // loop's, and together they must fit the task's first slab of memory.
        var exchange = try await sendWithRetries(call, first: call.outgoing.request)
        // Storing, the common case, waits for nothing and runs as a plain function; a merge or an invalidation may
        // send again or wait for the disk tier.
        if call.outgoing.changesTheCache, !storeIfThatIsAll(exchange, call.outgoing, call: call) {
            exchange = try await record(exchange, call.outgoing, call: call)
        }
        decodeOnce(&exchange, for: call)
        return exchange
    }

    /// Decodes an acceptable answer once for every caller of the flight that asks for the leader's type.
    @inline(never)
    private func decodeOnce(_ exchange: inout Exchange, for call: Call) {
        guard let decoding = call.decoding, configuration.acceptableStatusCodes.contains(exchange.response.statusCode)
        else { return }
        exchange.decoded = decoding.decode(exchange.response)
    }

    /// Serves a stale response now and revalidates it in a task of its own (the call's outgoing request), at most
    /// once per stored response at a time, even with coalescing off: keyed like the cache entry.
    func revalidateInBackground(_ call: Call) {
        let revalidation = call.outgoing
        let varyNames: [String]
        if case .store(_, _, let entry?) = revalidation.record { varyNames = entry.varyNames } else { varyNames = [] }
        let key = RequestKey(
            revalidation.request, varyingOn: configuration.coalescingHeaders + varyNames,
            ignoring: call.adapted.ignoredHeaders ?? configuration.coalescingIgnoredHeaders, partition: call.partition)
        backgroundRefreshes.run(key: key) { [self] in _ = try await sendShared(call) }
    }

    /// A request as built, and whether its target may receive the client's credentials.
    struct Prepared {
        var request: TransportRequest
        var isTrusted: Bool
        /// The coalescing key of `request` without a partition, when it was built already (a plain `GET`).
        var sharingKey: RequestKey? = nil
    }

    /// Builds the request that will be sent: URL, merged headers, encoded body. Throws before anything
    /// is sent when any part is malformed, the method included (a method that is not a token could smuggle a
    /// second request onto the connection). The credential fields of the default headers go only to a trusted
    /// origin (or with ``APIRequest/sendsCredentialsToAnyOrigin``), and no credential goes over cleartext `http` to
    /// a host that is not loopback unless the configuration allows it.
    @inline(never)  // its temporaries stay off the async frame of `perform`, which the caller's task holds
    func prepare(_ request: RequestFields) throws(APIError) -> Prepared {
        try request.method.validate()
        let (target, isKnown) = try URLBuilder.target(
            base: base, path: request.path, query: request.query, recent: recentURLs)
        let isPlainGET = request.isPlainGET
        if isPlainGET, let plain = target.plainGET {
            return Prepared(request: plain.request, isTrusted: plain.isTrusted, sharingKey: plain.sharingKey)
        }
        let url = target.url
        let isAbsolute = URLBuilder.isAbsolute(request.path)
        let isTrusted = !isAbsolute || scope.trusts(url)
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
        var built = TransportRequest(
            method: request.method, url: url, headers: headers, body: body, credentials: scope.credentials)
        built.redirectPolicy = request.redirectPolicy ?? configuration.redirectPolicy
        built.keepURLText(target.text)
        // No credential in clear text to another machine (its own, the defaults', the token to come); for a relative
        // path that is one flag worked out with the client.
        if isAbsolute ? !scope.allowsCleartext && Cleartext.isExposed(url) : scope.baseIsExposed {
            try scope.refuseCleartextCredentials(
                in: built, exposed: true, authorized: willAuthorize(request, isTrusted: isTrusted))
        }
        // A plain `GET` is kept for reuse from its URL's second call: a URL called once (a new query each time) does
        // not pay for keeping it.
        guard isPlainGET, isKnown else { return Prepared(request: built, isTrusted: isTrusted) }
        let plain = RecentURLs.PlainGET(
            request: built, isTrusted: isTrusted,
            sharingKey: RequestKey(
                built, varyingOn: configuration.coalescingHeaders, ignoring: configuration.coalescingIgnoredHeaders))
        recentURLs.keep(plain, for: target)
        return Prepared(request: built, isTrusted: isTrusted, sharingKey: plain.sharingKey)
    }

    @inline(never)  // keeps the key's temporaries off the async frame of `sendShared`
    private func coalescingKey(
        for request: TransportRequest, policy: CoalescingPolicy, partition: String?, known: RequestKey? = nil,
        ignoring ignored: Set<String>? = nil
    ) -> RequestKey? {
        switch policy {
        case .never: return nil
        case .always: break
        case .automatic:
            guard configuration.isCoalescingEnabled, request.method == .get || request.method == .head else {
                return nil
            }
        }
        return known
            ?? RequestKey(
                request, varyingOn: configuration.coalescingHeaders,
                ignoring: ignored ?? configuration.coalescingIgnoredHeaders, partition: partition)
    }

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
        // Only a call with a credential can refresh, so only it pays for binding the scope. (That path is a function
        // of its own: inlined, the task-local binding made this frame 912 bytes, and the flight task allocated two
        // more slabs of memory on every call.)
        guard call.authorization != nil else { return try await attempts(call, first: first) }
        return try await attemptsInEventScope(call, first: first)
    }

    @inline(never)
    private nonisolated(nonsending) func attemptsInEventScope(_ call: Call, first: TransportRequest) async throws
        -> Exchange
    {
        try await EventScope.$current.withValue(EventScope(instrumentation, call.id)) {
            try await attempts(call, first: first)
        }
    }

    @inline(never)
    private nonisolated(nonsending) func attempts(_ call: Call, first: TransportRequest) async throws -> Exchange {
        // Only what crosses an `await` lives in this frame; the bookkeeping after each attempt runs in `afterAttempt`,
        // a plain function whose temporaries stay on the thread's stack. (Inlined here, they made this async frame
        // 3.3 kB, past the task's first slab of memory, and so a heap allocation on every call.)
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
    private struct AttemptLoop {
        var authorization: Authorization?
        var attempt = 0
        /// Resends after a refreshed credential: they count as attempts, not against the retry policy.
        var resends = 0
        var timings = FlightTimings()
    }

    /// What the retry loop does after an attempt.
    private enum NextStep {
        case finish(Exchange)
        case fail(APIError)
        /// Refresh the credential the server rejected, then send again.
        case resend(rejected: TransportResponse)
        case retry(after: Duration)
    }

    /// Decides what follows an attempt: an acceptable response or the retry policy's "stop" ends the flight, a
    /// rejected credential earns one refresh and resend, anything else may be retried after a delay.
    @inline(never)
    private func afterAttempt(
        _ outcome: RetryContext.Outcome, sent: TransportRequest, call: Call, loop: inout AttemptLoop
    ) -> NextStep {
        if case .response(let response) = outcome {
            if configuration.acceptableStatusCodes.contains(response.statusCode) {
                return .finish(
                    Exchange(
                        request: sent, response: response, attempts: loop.attempt, leader: call.id,
                        timings: loop.timings, asked: Self.asked(call, sent: sent)))
            }
            if isCredentialRejected(response, authorized: loop.authorization != nil) {
                guard loop.authorization != nil else { return .fail(APIError.unauthorized(response)) }
                loop.resends += 1
                return .resend(rejected: response)
            }
        }
        let context = RetryContext(
            request: sent, attempt: loop.attempt - loop.resends, outcome: outcome, now: configuration.currentDate())
        let decision = call.limits.allowing(configuration.retryPolicy.decision(for: context), now: deadlines.elapsed)
        switch (decision, outcome) {
        case (.retry(let delay), _):
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
    private static func asked(_ call: Call, sent: TransportRequest) -> TransportRequest? {
        call.outgoing.request.sharesStorage(with: sent) ? nil : call.outgoing.request
    }

    /// Runs the adapters in order; their failures become ``APIError/adapterFailed(_:)``. What they return is
    /// validated again, method and headers, since an adapter may change either.
    @inline(never)
    nonisolated(nonsending) func adapt(_ request: TransportRequest) async throws -> TransportRequest {
        try await adapt(request) { _, _, _ in }
    }

    /// Runs the adapters once before the cache lookup, noting whether one that declared nothing changed a
    /// header the cache and the key cannot see (the call is then private), and which headers adapters that declared
    /// `variesOn: []` changed (the coalescing key ignores them: a signature or a timestamp must not split flights).
    nonisolated(nonsending) func adaptBeforeLookup(_ request: TransportRequest) async throws -> Adapted {
        guard !configuration.adapters.isEmpty else { return Adapted(unadapted: request, request: request) }
        var isPrivate = false
        var irrelevant: Set<String> = []
        let adapted = try await adapt(request) { adapter, before, after in
            switch adapter.variesOn {
            case nil:
                if !isPrivate, !scope.changesOnlyKeyedHeaders(before, after) { isPrivate = true }
            case let declared? where declared.isEmpty && before != after:
                irrelevant.formUnion(CredentialScope.changedNames(before, after))
            default:
                break
            }
        }
        var result = Adapted(unadapted: request, request: adapted, isPrivate: isPrivate)
        // A credential is never ignored: the key keeps credential fields whatever the ignored names say.
        if !irrelevant.isEmpty { result.ignoredHeaders = configuration.coalescingIgnoredHeaders.union(irrelevant) }
        return result
    }

    private func adapt(
        _ request: TransportRequest, observe: (any RequestAdapter, HeaderFields, HeaderFields) -> Void
    ) async throws -> TransportRequest {
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
            try scope.refuseCleartextCredentials(in: request)
        }
        return request
    }

    /// One attempt on the wire, bounded by the deadline, recorded in the loop's timings. Errors that are not
    /// ``APIError`` become ``APIError/transport(_:underlying:)`` of kind ``TransportFailure/other``; cancellation
    /// is thrown on.
    @inline(never)
    private nonisolated(nonsending) func sendOnce(_ sent: TransportRequest, call: Call, loop: inout AttemptLoop)
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
        let start = instrumentation.attemptSent(request, attempt: attempt, of: call)
        // The log and the deadlines keep one time, so the attempt's deadline counts from the time just read.
        let deadline = TransportDeadline(
            timeout: call.limits.nextWait(now: start), scheduler: deadlines, start: start)
        do {
            let response = try await configuration.transport.send(request, deadline: deadline)
            instrumentation.received(response, attempt: attempt, since: start, of: call)
            loop.timings.record(attempt, of: request, response, duration: instrumentation.log.elapsedTime - start)
            return .response(response)
        } catch {
            let duration = instrumentation.log.elapsedTime - start
            loop.timings.record(attempt, of: request, nil, duration: duration)
            // A transport stopped by its own deadline may throw `CancellationError`: that is the timeout, unless the
            // caller (or the flight) was cancelled.
            if error is CancellationError, !Task.isCancelled, duration >= deadline.timeout {
                return .failure(deadline.timeoutError)
            }
            return .failure(try Self.attemptError(error))
        }
    }

    /// An attempt's error as the retry policy sees it; cancellation is thrown instead.
    @inline(never)
    private static func attemptError(_ error: any Error) throws(CancellationError) -> APIError {
        switch error {
        case let error as APIError: return error
        case is CancellationError: throw CancellationError()
        default: return .transport(.other, underlying: error)
        }
    }

    // MARK: Decoding

    // The two steps below are specialized in the caller's module with `send(_:)`, but not inlined into it: their
    // temporaries then stay on the thread's stack rather than in the async frame of `send`, which the caller's task
    // holds for the whole call.

    /// The answer's body decoded as `T` in the caller's task; a failure ends the call (`requestFailed`).
    @inlinable @inline(never)
    func value<T: Decodable>(of answer: Answer, as type: T.Type, decoder: JSONDecoder) throws -> T {
        do {
            return try Self.decode(type, from: answer.exchange.response, decoder: decoder)
        } catch {
            throw failed(answer, error)
        }
    }

    /// The value the flight decoded once when it was decoded as `T` by `decoder`, or the body decoded now.
    @inlinable @inline(never)
    func sharedValue<T: Decodable & Sendable>(of answer: Answer, as type: T.Type, decoder: JSONDecoder) throws -> T {
        do {
            if let shared = try answer.exchange.decoded?.value(as: type, decoder: decoder) { return shared }
            return try Self.decode(type, from: answer.exchange.response, decoder: decoder)
        } catch {
            throw failed(answer, error)
        }
    }

    /// Decodes in the caller's task: never inside an actor, so a large body never blocks shared state.
    @inlinable
    static func decode<T: Decodable>(_ type: T.Type, from response: TransportResponse, decoder: JSONDecoder)
        throws(APIError)
        -> T
    {
        // A type comparison, not `as? T`: a dynamic cast looks up metadata on every call, and `Data` is the common case.
        if T.self == Data.self { return unsafeBitCast(response.body, to: T.self) }
        do {
            return try decoder.decode(T.self, from: response.body)
        } catch {
            throw .decodingFailed(type: String(describing: T.self), underlying: error, response: response)
        }
    }
}
