import Foundation

extension APIClient {
    // MARK: Observing

    /// A new subscriber to everything the client does from now on: one ``ClientEvent`` per step of every call.
    ///
    /// Every access returns a new stream, and each stream receives every event, in order. A subscriber keeps up to
    /// ``EventLog/defaultBufferSize`` unread events and then drops its oldest (counted in
    /// ``Metrics/droppedEvents``): a slow subscriber never slows a call down. Stop iterating, or cancel the task
    /// that iterates, and the subscriber is removed.
    ///
    /// ```swift
    /// Task {
    ///     for await event in client.events where event.kind == .cacheMiss {
    ///         misses.increment()
    ///     }
    /// }
    /// ```
    ///
    /// - Important: Events are built only while someone subscribes; with no subscriber, emitting costs one atomic
    ///   read. URLs, headers and error descriptions in events are redacted (see ``ClientEvent``). Read `events`
    ///   once per task: two tasks iterating one stream share its events (see ``EventLog/subscribe(bufferingNewest:)``).
    public var events: AsyncStream<ClientEvent> { eventLog.subscribe() }

    /// A new subscriber, like ``events``, that keeps up to `limit` unread events.
    ///
    /// - Parameter limit: How many unread events to keep before dropping the oldest.
    /// - Returns: A stream of every event from now on.
    public func events(bufferingNewest limit: Int) -> AsyncStream<ClientEvent> {
        eventLog.subscribe(bufferingNewest: limit)
    }

    /// The log behind ``events``: how many subscribers listen, how many events were dropped.
    public var eventLog: EventLog { instrumentation.log }

    /// Prints one line per event until the returned task is cancelled; for debugging.
    ///
    /// ```
    /// #11 +0.0ms GET https://api.example.com/users?token=<redacted> started
    /// #11 +0.1ms GET https://api.example.com/users?token=<redacted> attempt 1 sent
    /// #12 +3.2ms GET https://api.example.com/users?token=<redacted> → joined #11
    /// ```
    ///
    /// The subscription starts before this returns, so the next call is printed in full.
    ///
    /// - Parameter write: Where lines go; `print` by default.
    /// - Returns: The task that prints; cancel it to stop.
    @discardableResult
    public func printEvents(to write: @escaping @Sendable (String) -> Void = { print($0) }) -> Task<Void, Never> {
        eventLog.printEvents(to: write)
    }

    // MARK: Recording

    /// The start of every call: counts it, emits `requestStarted`, and runs steps 1–3 when none of them waits (no
    /// authenticator, adapters or latest-wins slot). A fresh hit is then answered here, and the caller's `send`
    /// reaches no suspension point (`Docs/Performance.md#no-suspension-for-a-hit`). Otherwise ``answer(_:_:decodingOnce:)`` goes on. On failure this emits
    /// `requestFailed` and throws the redacted error.
    @usableFromInline
    func start(_ request: RequestFields, decodingOnce shared: SharedDecoding?) throws -> Start {
        let call = begin(request)
        guard request.latestWins == nil, !stepsBeforeSendingWait else {
            return .sending(Sending(call: call))
        }
        do {
            switch try route(request, id: call.id, decoding: shared, joining: true) {
            case .answered(let exchange):
                return .answered(Answer(call: call, exchange: try checked(exchange, for: request), flightEnded: nil))
            case .send(let routed):
                return .sending(Sending(call: call, routed: routed))
            case .join(let joining):
                return .sending(Sending(call: call, joining: joining))
            }
        } catch {
            throw failed(call, error)
        }
    }

    /// How ``start(_:decodingOnce:)`` left a call.
    @usableFromInline
    enum Start {
        /// Answered at once: the caller decodes.
        case answered(Answer)
        /// To be sent: the caller goes on with ``answer(_:_:decodingOnce:)``.
        case sending(Sending)
    }

    /// A started call on its way to the network.
    @usableFromInline
    struct Sending: Sendable {
        let call: Instrumentation.StartedCall
        /// What to send, when steps 1–3 ran in ``start(_:decodingOnce:)``; `nil` when they wait and run here.
        var routed: Call? = nil
        /// The flight to join, when steps 1–3 found one in the air for the request (no ``Call`` is made for it).
        var joining: Joining? = nil
    }

    /// The rest of a call that ``start(_:decodingOnce:)`` did not answer: its remaining steps
    /// (``perform(_:id:decodingOnce:)``, or ``send(_:for:)`` after steps 1–3), and on failure `requestFailed` and the
    /// redacted error. The caller then decodes, and ends the call with ``finished(_:)`` or ``failed(_:_:)``.
    @usableFromInline
    nonisolated(nonsending) func answer(
        _ sending: Sending, _ request: RequestFields, decodingOnce shared: SharedDecoding?
    ) async throws -> Answer {
        let call = sending.call
        do {
            // A joiner's task holds this frame while it waits: the rare ways (latest-wins, steps 1–3 that wait) go on
            // in a frame of their own, so that this one keeps none of their values (Docs/Performance.md#joining).
            let exchange =
                if let routed = sending.routed {
                    try await send(routed, for: request)
                } else if sending.joining != nil {
                    // Read in place, not bound: a binding copies the key and the request (a retain and a release each).
                    try await join(
                        sending.joining.unsafelyUnwrapped, request, id: call.id, since: call.start,
                        decodingOnce: shared)
                } else {
                    try await proceed(sending, request, decodingOnce: shared)
                }
            // A joined flight's answer carries the time it answered, read once by the flight for all its callers.
            return Answer(
                call: call, exchange: exchange,
                flightEnded: exchange.joined ? exchange.answeredAt ?? instrumentation.elapsedTime : nil)
        } catch {
            throw failed(call, error)
        }
    }

    /// The rest of a call that ``start(_:decodingOnce:)`` neither routed nor sent to join a flight: its steps from the
    /// start, in its latest-wins slot when it has one.
    @inline(never)
    private nonisolated(nonsending) func proceed(
        _ sending: Sending, _ request: RequestFields, decodingOnce shared: SharedDecoding?
    ) async throws -> Exchange {
        if let latestWins = request.latestWins {
            return try await performLatestWins(latestWins, request, id: sending.call.id, decodingOnce: shared)
        }
        return try await performInScope(request, id: sending.call.id, decodingOnce: shared)
    }

    /// Counts a new call and emits its `requestStarted`.
    @inline(never)
    private func begin(_ request: RequestFields) -> Instrumentation.StartedCall {
        let call = instrumentation.begin()
        instrumentation.emit(call.id, .requestStarted(method: request.method, url: self.redactedURL(of: request)))
        return call
    }

    /// A call's answer before the caller decoded it.
    @usableFromInline
    struct Answer: Sendable {
        let call: Instrumentation.StartedCall
        @usableFromInline let exchange: Exchange
        /// When the flight this call joined answered; `nil` when it led its own.
        let flightEnded: Duration?
    }

    /// Ends a call that got its value: emits `requestFinished` and returns what its response holds besides the
    /// value, with the call's id and timings (decoding included).
    ///
    /// Consumes the answer: its exchange moves into the head. Borrowed, the exchange was copied into the head (a retain
    /// of an object every caller of the flight shares) and released when the caller dropped the answer.
    @usableFromInline
    func finished(_ answer: consuming Answer) -> ResponseHead {
        instrumentation.finished(
            answer.call, source: answer.exchange.source, status: answer.exchange.response.statusCode)
        let now = instrumentation.elapsedTime
        let call = answer.call
        let flightEnded = answer.flightEnded
        return ResponseHead(
            (consume answer).exchange, callID: call.id, total: now.minus(call.start),
            sharedFlightWait: flightEnded.map { $0.minus(call.start) })
    }

    /// Ends a call whose value could not be decoded: emits `requestFailed`; returns the redacted error to throw.
    @usableFromInline
    func failed(_ answer: Answer, _ error: any Error) -> any Error {
        failed(answer.call, error)
    }

    private func failed(_ call: Instrumentation.StartedCall, _ error: any Error) -> any Error {
        let error = instrumentation.redaction.sanitized(error)
        instrumentation.failed(call, error)
        return error
    }

    /// Runs the call in its latest-wins slot, in a task of its own; the request is its fields, typed for no value, so
    /// it carries none of the caller's types into it. (Not inlined: the slot's arguments would enlarge every call's
    /// frame.)
    @inline(never)
    private nonisolated(nonsending) func performLatestWins(
        _ latestWins: LatestWins, _ request: RequestFields, id: CallID, decodingOnce shared: SharedDecoding?
    ) async throws -> Exchange {
        try await latestWinsSlots.run(
            latestWins, fingerprint: try? prepare(request).request, clock: configuration.clock
        ) { [self] in
            try await performInScope(request, id: id, decodingOnce: shared)
        }
    }

    /// Runs the call's work with the scope that tells the refresher which call a refresh belongs to; without an
    /// authenticator there is no refresh, and binding a task-local costs an allocation per call.
    @inline(__always)
    private func performInScope(_ request: RequestFields, id: CallID, decodingOnce shared: SharedDecoding?)
        async throws -> Exchange
    {
        guard configuration.authenticator != nil else {
            return try await perform(request, id: id, decodingOnce: shared)
        }
        return try await EventScope.$current.withValue(EventScope(instrumentation, id)) {
            try await perform(request, id: id, decodingOnce: shared)
        }
    }

    /// The call's URL as it will be sent, redacted; the path as given when no URL can be built from it.
    func redactedURL(of request: RequestFields) -> String {
        let redaction = instrumentation.redaction
        guard let url = try? URLBuilder.url(base: base, path: request.path, query: request.query) else {
            return redaction.redact(request.path)
        }
        return redaction.redact(url)
    }

    /// Records how the cache answered a lookup.
    func recordLookup(_ lookup: CacheLookup, now: Date, id: CallID) {
        switch lookup {
        case .hit(let entry):
            instrumentation.count(.cacheHit)
            instrumentation.emit(id, .cacheHit(stale: !entry.isFresh(at: now)))
        case .staleWhileRevalidate:
            instrumentation.count(.cacheHit)
            instrumentation.emit(id, .cacheHit(stale: true))
            instrumentation.emit(id, .revalidationSent)
        case .validate:
            instrumentation.count(.cacheMiss)
            instrumentation.emit(id, .revalidationSent)
        case .miss, .unsatisfiable:
            instrumentation.count(.cacheMiss)
            instrumentation.emit(id, .cacheMiss)
        }
    }
}

extension EventScope {
    init(_ instrumentation: Instrumentation, _ callID: CallID) {
        self.init(instrumentation: instrumentation, callID: callID)
    }
}
