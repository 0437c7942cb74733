import Foundation
import Synchronization

/// What an ``APIClient`` records about its calls: the counters behind ``APIClient/metrics`` and the events of
/// ``APIClient/events``, with the redaction every event goes through.
///
/// Counters are always kept (one short critical section each); events are built only when someone listens.
final class Instrumentation: Sendable {
    /// The counters that ``count(_:)`` can increment.
    enum Counter {
        case upstreamCall, joined, cacheHit, cacheMiss, revalidation, retry, tokenRefresh
        case budgetDenial, circuitChange, circuitRejection, hedgeSent, hedgeWon, shed
    }

    /// A call that has started (``APIClient/start(_:decodingOnce:)``) and not ended: its id and when it started, for
    /// its last event. Not to be confused with `Call`, a call on its way to the network.
    struct StartedCall: Sendable {
        let id: CallID
        let start: Duration
    }

    let log: EventLog
    let redaction: Redaction
    /// Called with every event, in the task where it happens; see ``CallObserver``.
    let observers: [any CallObserver]
    private let counters = Counters()

    init(log: EventLog, redaction: Redaction, observers: [any CallObserver] = []) {
        self.log = log
        self.redaction = redaction
        self.observers = observers
    }

    /// A snapshot of the counters, with the log's dropped events.
    /// Time elapsed on the client's clock (``EventLog/elapsedTime``). Read here: a caller that went through ``log``
    /// for it retained and released the log around the read, on every call and in every task of the client at once.
    var elapsedTime: Duration { log.elapsedTime }

    var metrics: APIClient.Metrics {
        var metrics = counters.snapshot
        metrics.droppedEvents = log.droppedCount
        return metrics
    }

    /// Counts a new call and gives it its id (the count itself, so ids are unique and ordered).
    func begin() -> StartedCall {
        let number = counters.requests.wrappingAdd(1, ordering: .releasing).newValue
        return StartedCall(id: CallID(rawValue: UInt64(number)), start: log.elapsedTime)
    }

    func count(_ counter: Counter) {
        switch counter {
        case .upstreamCall: counters.upstreamCalls.wrappingAdd(1, ordering: .releasing)
        case .joined: counters.joined.wrappingAdd(1, ordering: .releasing)
        case .cacheHit: counters.cacheHits.wrappingAdd(1, ordering: .releasing)
        case .cacheMiss: counters.cacheMisses.wrappingAdd(1, ordering: .releasing)
        case .revalidation: counters.cacheRevalidations.wrappingAdd(1, ordering: .releasing)
        case .retry: counters.retries.wrappingAdd(1, ordering: .releasing)
        case .tokenRefresh: counters.tokenRefreshes.wrappingAdd(1, ordering: .releasing)
        case .budgetDenial: counters.budgetDenials.wrappingAdd(1, ordering: .releasing)
        case .circuitChange: counters.circuitStateChanges.wrappingAdd(1, ordering: .releasing)
        case .circuitRejection: counters.circuitRejections.wrappingAdd(1, ordering: .releasing)
        case .hedgeSent: counters.hedgesSent.wrappingAdd(1, ordering: .releasing)
        case .hedgeWon: counters.hedgesWon.wrappingAdd(1, ordering: .releasing)
        case .shed: counters.shed.wrappingAdd(1, ordering: .releasing)
        }
    }

    /// Whether an event emitted now would reach anyone: an observer or a subscriber of the log.
    var isListening: Bool { !observers.isEmpty || log.hasSubscribers }

    @inline(__always)
    func emit(_ id: CallID, _ kind: @autoclosure () -> ClientEvent.Kind) {
        guard observers.isEmpty else { return record(id, kind()) }
        log.emit(id, kind())
    }

    /// Emits a step of the flight `call` leads for the caller its events belong to now (``Call/emit(_:)``). Nobody
    /// listening, the common case, costs what ``emit(_:_:)`` costs: no lock of the call's, and no retain of the call
    /// or of this instance (the event is built before the call's lock is taken, so that no closure captures them).
    @inline(__always)
    func emit(for call: Call, _ kind: @autoclosure () -> ClientEvent.Kind) {
        guard isListening else { return }
        call.emitAsOwner(in: self, kind())
    }

    // MARK: Attempts

    /// Counts and reports an attempt about to be handed to the transport; returns when it started.
    func attemptSent(_ request: TransportRequest, attempt: Int, id: CallID) -> Duration {
        count(.upstreamCall)
        emit(id, .attemptSent(attempt: attempt, headers: self.redaction.redact(request.headers)))
        return log.elapsedTime
    }

    /// ``attemptSent(_:attempt:id:)`` for an attempt of a flight, reported for whoever its events belong to.
    @inline(never)  // its event's temporaries stay off the async frame of the flight's `sendOnce`
    func attemptSent(_ request: TransportRequest, attempt: Int, of call: Call) -> Duration {
        count(.upstreamCall)
        emit(for: call, .attemptSent(attempt: attempt, headers: self.redaction.redact(request.headers)))
        return log.elapsedTime
    }

    /// ``received(_:attempt:since:id:)`` for an attempt of a flight.
    @inline(never)  // inlined, its event's temporaries made the flight's `sendOnce` frame outgrow the task's first slab
    func received(_ response: TransportResponse, attempt: Int, since start: Duration, of call: Call) {
        emit(
            for: call,
            .responseReceived(
                attempt: attempt, status: response.statusCode, bytes: response.body.count,
                duration: self.log.elapsedTime - start))
    }

    func received(_ response: TransportResponse, attempt: Int, since start: Duration, id: CallID) {
        emit(
            id,
            .responseReceived(
                attempt: attempt, status: response.statusCode, bytes: response.body.count,
                duration: self.log.elapsedTime - start))
    }

    func reason(_ outcome: RetryContext.Outcome) -> ClientEvent.RetryReason {
        switch outcome {
        case .response(let response): .status(response.statusCode)
        case .failure(let error): .failure(describe(error))
        }
    }

    // MARK: Ending a Call

    func finished(_ call: StartedCall, source: ResponseSource, status: Int) {
        emit(call.id, .requestFinished(source: source, status: status, duration: self.log.elapsedTime - call.start))
    }

    func failed(_ call: StartedCall, _ error: any Error) {
        let cancelled = error is CancellationError
        if cancelled {
            counters.cancellations.wrappingAdd(1, ordering: .releasing)
        } else {
            counters.failures.wrappingAdd(1, ordering: .releasing)
        }
        emit(call.id, .requestFailed(error: describe(error), duration: self.log.elapsedTime - call.start))
    }

    /// The redacted description of an error; `cancelled` for cancellation.
    func describe(_ error: any Error) -> String {
        error is CancellationError ? "cancelled" : redaction.redact(String(describing: error))
    }
}

/// The counters behind ``APIClient/Metrics``, one atomic each: a call increments two or three of them (a joiner: its
/// start, its join, its cache miss), and behind one lock the callers of a burst waited for each other there.
///
/// Incremented with `wrappingAdd`, one `lock xadd` on x86-64: `add` traps on overflow, which it checks in a
/// compare-and-swap loop that starts over whenever another core incremented first, as the callers of a burst do. A
/// count wraps after 2⁶³ calls, which no client makes.
private final class Counters: Sendable {
    let requests = Atomic(0)
    let upstreamCalls = Atomic(0)
    let joined = Atomic(0)
    let cacheHits = Atomic(0)
    let cacheMisses = Atomic(0)
    let cacheRevalidations = Atomic(0)
    let retries = Atomic(0)
    let tokenRefreshes = Atomic(0)
    let failures = Atomic(0)
    let cancellations = Atomic(0)
    let budgetDenials = Atomic(0)
    let circuitStateChanges = Atomic(0)
    let circuitRejections = Atomic(0)
    let hedgesSent = Atomic(0)
    let hedgesWon = Atomic(0)
    let shed = Atomic(0)

    /// The counters now. Every other counter of a call is incremented after its `requests`, so `requests` is read
    /// last: a snapshot never shows a call's join or failure without the call.
    var snapshot: APIClient.Metrics {
        var metrics = APIClient.Metrics()
        metrics.upstreamCalls = upstreamCalls.load(ordering: .acquiring)
        metrics.joined = joined.load(ordering: .acquiring)
        metrics.cacheHits = cacheHits.load(ordering: .acquiring)
        metrics.cacheMisses = cacheMisses.load(ordering: .acquiring)
        metrics.cacheRevalidations = cacheRevalidations.load(ordering: .acquiring)
        metrics.retries = retries.load(ordering: .acquiring)
        metrics.tokenRefreshes = tokenRefreshes.load(ordering: .acquiring)
        metrics.failures = failures.load(ordering: .acquiring)
        metrics.cancellations = cancellations.load(ordering: .acquiring)
        metrics.retryBudgetDenials = budgetDenials.load(ordering: .acquiring)
        metrics.circuitStateChanges = circuitStateChanges.load(ordering: .acquiring)
        metrics.circuitRejections = circuitRejections.load(ordering: .acquiring)
        metrics.hedgesSent = hedgesSent.load(ordering: .acquiring)
        metrics.hedgesWon = hedgesWon.load(ordering: .acquiring)
        metrics.shedCalls = shed.load(ordering: .acquiring)
        metrics.requests = requests.load(ordering: .acquiring)
        return metrics
    }
}

/// The call whose task is running, so that a ``TokenRefresher`` can report a refresh it starts for that call.
///
/// A task-local value rather than a parameter: the refresher is shared and knows nothing of clients, and its
/// refresh task is started from the calling task, whose task-local values it inherits.
struct EventScope: Sendable {
    @TaskLocal static var current: EventScope?

    let instrumentation: Instrumentation
    let callID: CallID

    /// Called as the refresh starts, in the task of the call that starts it.
    func refreshStarted() {
        instrumentation.count(.tokenRefresh)
        instrumentation.emit(callID, .tokenRefreshStarted)
    }

    /// Called with the refresh's result or timeout, before waiters are resumed. The credential is never looked at.
    func refreshEnded(_ result: Result<Credential, APIError>) {
        switch result {
        case .success:
            instrumentation.emit(callID, .tokenRefreshSucceeded)
        case .failure(let reason):
            instrumentation.emit(callID, .tokenRefreshFailed(reason: instrumentation.describe(reason)))
        }
    }
}
