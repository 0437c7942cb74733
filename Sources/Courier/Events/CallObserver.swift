/// Sees every step of every call as it happens, in the task where it happens, and may add header fields to each
/// attempt: the seam that logging, metrics and tracing libraries plug into.
///
/// ``APIClient/events`` hands events to other tasks through a buffer, which suits a dashboard but not a tracer: a
/// span must start in the caller's task, under the caller's task-local values (its trace context), and the
/// outgoing request must carry that context. An observer is called synchronously instead, with the same redacted
/// ``ClientEvent`` a subscriber gets, before the call goes on. Register one on
/// ``APIClient/Configuration/observers``; implement only the requirements you need, the others do nothing.
///
/// ```swift
/// struct SlowCallReporter: CallObserver {
///     func record(_ event: ClientEvent, in log: EventLog) {
///         if case .requestFinished(_, _, let duration) = event.kind, duration > .seconds(1) {
///             print("\(event.callID) took \(duration)")
///         }
///     }
/// }
/// ```
///
/// The `CourierObservability` product (Courier's package trait `Observability`) builds swift-log lines, swift-metrics
/// counters and swift-distributed-tracing spans on this protocol.
///
/// - Important: Concurrency contract.
///   - Both requirements are called synchronously in the task where the step happens: ``record(_:in:)`` for
///     ``ClientEvent/Kind/requestStarted(method:url:)`` runs in the caller's task before anything else of the call,
///     so the caller's task-local values are visible there. Steps of a shared flight (attempts, retries, refreshes,
///     storing) run in the flight's task, which inherits the task-local values of the call that started it and
///     carries that call's id; once that call has left a flight others still wait for, the id of one of them (a
///     call's events end with its last event). A background revalidation runs in a task of its own, started from the call.
///   - They must be quick and must not block: the call waits for them. Never call back into the client from them.
///   - Events carry no credential (see ``ClientEvent``); that holds for observers too.
///   - Call ids are unique per client only. When one observer serves several clients, tell their calls apart by
///     the `log` argument: each client has its own ``EventLog`` (``APIClient/eventLog``).
public protocol CallObserver: Sendable {
    /// Called with every step of every call, in the order the steps happen within a task.
    ///
    /// - Parameters:
    ///   - event: The step, redacted like every ``ClientEvent``.
    ///   - log: The event log of the client the call belongs to; each client has its own.
    func record(_ event: ClientEvent, in log: EventLog)

    /// Called just before attempt number `attempt` of a call is handed to the transport, before its
    /// ``ClientEvent/Kind/attemptSent(attempt:headers:)`` event: add the fields this attempt should carry, such as
    /// W3C `traceparent`.
    ///
    /// The fields go only to the transport: the cache and the coalescing key were built before, so they never split a
    /// shared flight or a cache entry. A field the request already has is kept as it is. A name that is not a token
    /// or a value with a line break fails the call with ``APIError/invalidRequest(_:)`` before anything is sent.
    ///
    /// - Parameters:
    ///   - attempt: The attempt's number, from 1; a resend after a token refresh counts.
    ///   - callID: The call that sends it: the leader, in a shared flight.
    ///   - log: The event log of the client the call belongs to.
    ///   - headers: Starts empty, or with what earlier observers added; add fields to it.
    func prepareAttempt(_ attempt: Int, of callID: CallID, in log: EventLog, headers: inout HeaderFields)
}

extension CallObserver {
    /// Does nothing, for observers that only add header fields.
    ///
    /// - Parameters:
    ///   - event: The step.
    ///   - log: The event log of the client the call belongs to.
    public func record(_ event: ClientEvent, in log: EventLog) {}

    /// Adds nothing, for observers that only record events.
    ///
    /// - Parameters:
    ///   - attempt: The attempt's number.
    ///   - callID: The call that sends it.
    ///   - log: The event log of the client the call belongs to.
    ///   - headers: Left as it is.
    public func prepareAttempt(_ attempt: Int, of callID: CallID, in log: EventLog, headers: inout HeaderFields) {}
}

extension Instrumentation {
    /// The slow path of ``emit(_:_:)`` when observers are registered: the event is built every time, handed to any
    /// subscriber, then to each observer in order.
    func record(_ id: CallID, _ kind: ClientEvent.Kind) {
        log.emit(id, kind)
        let event = ClientEvent(callID: id, at: log.elapsedTime, kind: kind)
        for observer in observers { observer.record(event, in: log) }
    }

    /// The request as the transport gets it: with the fields observers add for this attempt, fields the request
    /// already has kept. It is built after the cache and coalescing keys, so these fields never enter them.
    /// The call's ``Call/eventID`` is read only when there are observers: it is read under the call's lock.
    func outgoing(_ request: TransportRequest, attempt: Int, of call: Courier.Call) throws(APIError)
        -> TransportRequest
    {
        guard !observers.isEmpty else { return request }
        let id = call.eventID
        var added = HeaderFields()
        for observer in observers { observer.prepareAttempt(attempt, of: id, in: log, headers: &added) }
        guard !added.isEmpty else { return request }
        try added.validate()
        var outgoing = request
        outgoing.headers.addMissing(from: added)
        return outgoing
    }
}
