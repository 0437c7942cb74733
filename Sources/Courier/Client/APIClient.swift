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
    /// Shares one flight among callers of the same request; a caller that joins one leaves at its own deadline, on
    /// ``deadlines``, with `APIError.timedOut`.
    let coalescer: RequestCoalescer<RequestKey, Exchange>
    /// The requests in flight in each latest-wins slot; see ``LatestWins``.
    let latestWinsSlots = LatestWinsSlots()
    /// Background refreshes of stale responses served under `stale-while-revalidate`.
    let backgroundRefreshes = BackgroundRefreshes()
    /// Counters and events; see ``metrics`` and ``events``.
    let instrumentation: Instrumentation
    /// Who may receive the client's credentials, and what counts as one; see ``CredentialScope``.
    let scope: CredentialScope
    /// The retry budget, circuit breakers, hedging and load limits of ``Configuration/resilience``.
    let resilience: ClientResilience

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
        self.coalescer = RequestCoalescer(
            joinTimeouts: JoinTimeouts(scheduler: deadlines, error: { APIError.timedOut($0) }))
        self.instrumentation = Instrumentation(
            log: log, redaction: Redaction(scope.credentials), observers: configuration.observers)
        self.resilience = ClientResilience(
            configuration.resilience, retryPolicy: configuration.retryPolicy, clock: configuration.clock,
            instrumentation: instrumentation)
    }

    // MARK: Sending Requests

    /// Sends a request and decodes the body of a successful response as `T`.
    ///
    /// The steps: build the URL and headers (bad input fails here, before anything is sent), answer from the
    /// ``ResponseCache`` or decide what to send (see ``CachePolicy``), join an identical request already in
    /// flight or start one, run adapters and send with retries, check the status, then decode in the caller's
    /// task. `APIRequest<Data>` returns the body as it is.
    ///
    /// Called from an actor (the main actor, say), the call's steps and its decoding leave the actor and the result
    /// comes back to it, as from any plain `async` function; called from nonisolated code, the call runs where its
    /// caller runs, with no executor change.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The decoded value with the response metadata.
    /// - Throws: ``APIError`` for every failure, or `CancellationError` when the calling task is cancelled.
    @inlinable @discardableResult
    public nonisolated(nonsending) func send<T: Decodable>(_ request: APIRequest<T>) async throws -> APIResponse<T> {
        // Inlined and specialized for `T`; the path after this takes the request's fields and is not generic
        // (Docs/Performance.md#specialization). The call's steps and decoding never run on the caller's actor
        // (Docs/Performance.md#executor-checks). (`#isolation` is bound first: compared in place, Swift 6.3's debug
        // build emits broken IR for it.)
        let isolation = #isolation
        guard isolation == nil else { return try await sendOffTheCallersActor(request) }
        return try await respond(to: request)
    }

    /// Sends a request and decodes the body of a successful response as `T`, once for every caller that shares the
    /// call: joiners that ask for the same type with the same decoder get the value the flight decoded.
    ///
    /// Called from an actor, the call's steps and its decoding leave the actor, as in the other `send` overloads.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The decoded value with the response metadata.
    /// - Throws: ``APIError`` for every failure, or `CancellationError` when the calling task is cancelled.
    @inlinable @inline(__always) @discardableResult
    public nonisolated(nonsending) func send<T: Decodable & Sendable>(_ request: APIRequest<T>) async throws
        -> APIResponse<T>
    {
        let isolation = #isolation
        guard isolation == nil else { return try await sendOffTheCallersActor(request) }
        return try await respondDecodingOnce(to: request)
    }

    /// Sends a request whose response body is not needed, and checks its status.
    ///
    /// Called from an actor, the call's steps leave the actor, as in the other `send` overloads.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The response metadata; its ``APIResponse/data`` holds the body if there was one.
    /// - Throws: ``APIError`` for every failure, or `CancellationError` when the calling task is cancelled.
    @discardableResult
    public nonisolated(nonsending) func send(_ request: APIRequest<Void>) async throws -> APIResponse<Void> {
        let isolation = #isolation
        guard isolation == nil else { return try await sendOffTheCallersActor(request) }
        return try await respond(to: request)
    }

    // MARK: The Path of One Call

    /// Everything but the caller's own decoding, step by step; shared by the `send` overloads.
    ///
    /// This and the other async steps of a call are `nonisolated(nonsending)`: they run on the executor of the public
    /// `send` that called them, with no executor check on entry (`Docs/Performance.md#executor-checks`).
    @inline(never)  // inlined into `answer`, its frame would be a joiner's too (Docs/Performance.md#joining)
    nonisolated(nonsending) func perform(_ request: RequestFields, id: CallID, decodingOnce shared: SharedDecoding?)
        async throws -> Exchange
    {
        // 1–3. Build the request, learn who is calling, and ask the cache: an answer, or a call to send. Without an
        //      authenticator or adapters nothing in these steps waits, and they run as a plain function.
        let route =
            stepsBeforeSendingWait
            ? try await routeAuthorizing(request, id: id, decoding: shared)
            : try route(request, id: id, decoding: shared)
        switch route {
        case .answered(let answer): return try checked(answer, for: request)
        case .send(let call): return try await send(call, for: request)
        case .join(let joining):
            return try await join(joining, request, id: id, since: deadlines.elapsed, decodingOnce: shared)
        }
    }

    /// Steps 4–6 of a call whose steps 1–3 gave `call` to send.
    @inline(__always)  // in the frame of its caller: a frame of its own is one more allocation per call
    nonisolated(nonsending) func send(_ call: Call, for request: RequestFields) async throws -> Exchange {
        // 4–5. Share one flight with identical callers, or send alone; the flight records the answer. With a stored
        //      response that may stand in when the server fails, apart, so that the common call's task does not hold
        //      the frame of the error handling.
        let exchange =
            call.outgoing.fallback == nil ? try await sendShared(call) : try await sendServingStaleOnError(call)
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

    /// Where step 3 leads: an answer from the cache, a call to send, or a flight in the air to join.
    enum Route {
        case answered(Exchange)
        case send(Call)
        /// Only when asked for (`joining`): see ``joining(_:_:_:)``.
        case join(Joining)
    }

    /// Steps 1–3 for a client without an authenticator or adapters, where none of them waits.
    ///
    /// With `joining`, a call that would send a request whose flight is in the air is routed to join it, without a
    /// ``Call`` (``join(_:_:id:since:decodingOnce:)``).
    @inline(never)  // its values stay on the thread's stack, off the async frame of `perform`
    func route(
        _ request: RequestFields, id: CallID, decoding shared: SharedDecoding?, joining: Bool = false
    ) throws(APIError) -> Route {
        // 1. Build the request: bad input fails here, and nothing is sent.
        let prepared = try prepare(request)
        // A call whose flight is in the air joins it before step 3 when the plan would only send the request (no cache,
        // or a cache its leader found empty for it); with no flight in the air, the call leads, and need not look for
        // one again below. Asked of the request as built, before it is wrapped for step 3 (two more references to it).
        var joining = joining
        if joining {
            if !coalescer.mayHaveFlights {
                joining = false
            } else if let sighting = flightToJoinWithoutALookup(request, prepared, flightSeen: &joining) {
                return .join(Joining(built: consume prepared, at: sighting))
            }
        }
        let adapted = Adapted(unadapted: prepared.request, request: prepared.request, sharingKey: prepared.sharingKey)
        // 3. The cache answers, or says what to send and how to record the answer.
        return try plannedRoute(
            request, adapted, limits: limits(of: request), authorization: nil, id: id, decoding: shared,
            joining: joining)
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

    /// The call's deadlines, starting `now` (read only when the call has a `callTimeout`).
    func limits(of request: RequestFields, now: @autoclosure () -> Duration? = nil) -> CallLimits {
        CallLimits(
            timeout: request.timeout ?? configuration.timeout,
            callTimeout: request.callTimeout ?? configuration.callTimeout, now: now() ?? deadlines.elapsed)
    }

    /// Step 3 for ``routeAuthorizing(_:id:decoding:)``: ``plannedRoute(_:_:limits:authorization:id:decoding:joining:)``
    /// in a function of its own, so that the plan's values stay off the async frame of
    /// ``perform(_:id:decodingOnce:)`` (`Docs/Performance.md#async-frames`).
    @inline(never)
    private func route(
        _ request: RequestFields, _ adapted: consuming Adapted, limits: CallLimits, authorization: Authorization?,
        id: CallID, decoding shared: SharedDecoding?
    ) throws(APIError) -> Route {
        try plannedRoute(request, adapted, limits: limits, authorization: authorization, id: id, decoding: shared)
    }

    /// Step 3: asks the cache's plan and turns it into an answer or a call to send (a stale answer also starts its
    /// background revalidation). Inlined into the synchronous step that built `adapted`, which then moves it into the
    /// call, or drops it, in one frame.
    @inline(__always)
    private func plannedRoute(
        _ request: RequestFields, _ adapted: consuming Adapted, limits: CallLimits, authorization: Authorization?,
        id: CallID, decoding shared: SharedDecoding?, joining: Bool = false
    ) throws(APIError) -> Route {
        // `adapted` is consumed: the call that sends takes it over, where a copy of its optional fields (the sharing
        // key, the ignored names) went through the runtime's generic `Optional` witnesses, about 80 instructions each.
        func call(_ outgoing: Outgoing, decoding: SharedDecoding?, adapted: consuming Adapted) -> Call {
            Call(
                client: self, id: id, adapted: adapted, limits: limits, authorization: authorization,
                coalescing: request.coalescing, decoding: decoding, outgoing: outgoing,
                streamed: request.streamed, hedging: request.hedging)
        }
        switch try plan(
            adapted, policy: request.cachePolicy, defaultFreshness: request.defaultFreshness,
            partition: cachePartition(adapted, identity: authorization?.identity), id: id, decoding: shared)
        {
        case .serve(let response, let decoded):
            return .answered(
                Exchange(request: adapted.request, response: response, attempts: 0, source: .cache, decoded: decoded))
        case .serveStale(let response, let revalidation):
            let served = adapted.request
            revalidateInBackground(call(revalidation, decoding: nil, adapted: adapted))
            return .answered(
                Exchange(request: served, response: response, attempts: 0, source: .staleWhileRevalidate))
        case .send(let outgoing):
            // The cache was asked first: only a call that must send may join.
            if joining, authorization == nil, let joining = self.joining(request, adapted, outgoing) {
                return .join(joining)
            }
            return .send(call(outgoing, decoding: shared, adapted: adapted))
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
        return joined(coalesced, id: call.id)
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
        // The clock read once for both (each read is about 60 instructions of every shared call).
        let now = deadlines.elapsed
        return WaitBound(
            scheduler: deadlines, leading: call.limits.remaining(now: now), joining: call.limits.nextWait(now: now),
            error: { APIError.timedOut($0) })
    }

    /// The flight's exchange as this caller got it, counted and reported when the caller joined another's flight.
    @inline(never)  // keeps the event's temporaries off the async frame of `sendShared`
    func joined(_ coalesced: Coalesced<Exchange>, id: CallID) -> Exchange {
        var exchange = coalesced.value
        exchange.joined = coalesced.joined
        if coalesced.joined {
            instrumentation.count(.joined)
            instrumentation.emit(id, .joinedFlight(leader: exchange.leader ?? id))
        }
        return exchange
    }

    /// The work of one flight, however many callers share it: send with retries, record the answer in the cache,
    /// decode it once for the callers that share decoding.
    @inline(never)  // called from the flight's task and, unshared, from `sendShared`: neither carries its frame
    nonisolated(nonsending) func runFlight(_ call: Call) async throws -> Exchange {
        // The outgoing request is read from the call, not copied (Docs/Performance.md#async-frames).
        var exchange = try await sendWithRetries(call, first: call.outgoing.request)
        // Storing, the common case, waits for nothing and runs as a plain function; a merge or an invalidation may
        // send again or wait for the disk tier. A body still arriving (a streamed shape) is recorded as it passes.
        if call.outgoing.changesTheCache {
            if exchange.bodyStream != nil {
                exchange = try await recordArriving(exchange, call: call)
            } else if !storeIfThatIsAll(exchange, call.outgoing, call: call) {
                exchange = try await record(exchange, call.outgoing, call: call)
            }
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

    /// Whether `policy` lets `request` share a flight: always, never, or (automatic) a `GET` or `HEAD` of a client that
    /// coalesces.
    func mayShare(_ request: TransportRequest, policy: CoalescingPolicy) -> Bool {
        switch policy {
        case .never: false
        case .always: true
        case .automatic: configuration.isCoalescingEnabled && (request.method == .get || request.method == .head)
        }
    }

    @inline(never)  // keeps the key's temporaries off the async frame of `sendShared`
    func coalescingKey(
        for request: TransportRequest, policy: CoalescingPolicy, partition: String?, known: RequestKey? = nil,
        ignoring ignored: Set<String>? = nil
    ) -> RequestKey? {
        guard mayShare(request, policy: policy) else { return nil }
        return known
            ?? RequestKey(
                request, varyingOn: configuration.coalescingHeaders,
                ignoring: ignored ?? configuration.coalescingIgnoredHeaders, partition: partition)
    }

}
