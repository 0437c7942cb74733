import Foundation

/// What an ``APIClient`` records about its calls: the counters behind ``APIClient/metrics`` and the events of
/// ``APIClient/events``, with the redaction every event goes through.
///
/// Counters are always kept (one short critical section each); events are built only when someone listens.
final class Instrumentation: Sendable {
    /// The counters that ``count(_:)`` can increment.
    enum Counter {
        case upstreamCall, joined, cacheHit, cacheMiss, revalidation, retry, tokenRefresh
    }

    /// A call in progress: its id and when it started.
    struct Call: Sendable {
        let id: CallID
        let start: Duration
    }

    let log: EventLog
    let redaction: Redaction
    /// Called with every event, in the task where it happens; see ``CallObserver``.
    let observers: [any CallObserver]
    private let counters = Locked(APIClient.Metrics())

    init(log: EventLog, redaction: Redaction, observers: [any CallObserver] = []) {
        self.log = log
        self.redaction = redaction
        self.observers = observers
    }

    /// A snapshot of the counters, with the log's dropped events.
    var metrics: APIClient.Metrics {
        var metrics = counters.withLock { $0 }
        metrics.droppedEvents = log.droppedCount
        return metrics
    }

    /// Counts a new call and gives it its id (the count itself, so ids are unique and ordered).
    func begin() -> Call {
        let number = counters.withLock { metrics in
            metrics.requests += 1
            return metrics.requests
        }
        return Call(id: CallID(rawValue: UInt64(number)), start: log.elapsedTime)
    }

    func count(_ counter: Counter) {
        counters.withLock { metrics in
            switch counter {
            case .upstreamCall: metrics.upstreamCalls += 1
            case .joined: metrics.joined += 1
            case .cacheHit: metrics.cacheHits += 1
            case .cacheMiss: metrics.cacheMisses += 1
            case .revalidation: metrics.cacheRevalidations += 1
            case .retry: metrics.retries += 1
            case .tokenRefresh: metrics.tokenRefreshes += 1
            }
        }
    }

    @inline(__always)
    func emit(_ id: CallID, _ kind: @autoclosure () -> ClientEvent.Kind) {
        guard observers.isEmpty else { return record(id, kind()) }
        log.emit(id, kind())
    }

    // MARK: Attempts

    /// Counts and reports an attempt about to be handed to the transport; returns when it started.
    func attemptSent(_ request: TransportRequest, attempt: Int, id: CallID) -> Duration {
        count(.upstreamCall)
        emit(id, .attemptSent(attempt: attempt, headers: self.redaction.redact(request.headers)))
        return log.elapsedTime
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

    func finished(_ call: Call, source: ResponseSource, status: Int) {
        emit(call.id, .requestFinished(source: source, status: status, duration: self.log.elapsedTime - call.start))
    }

    func failed(_ call: Call, _ error: any Error) {
        let cancelled = error is CancellationError
        counters.withLock { metrics in
            if cancelled { metrics.cancellations += 1 } else { metrics.failures += 1 }
        }
        emit(call.id, .requestFailed(error: describe(error), duration: self.log.elapsedTime - call.start))
    }

    /// The redacted description of an error; `cancelled` for cancellation.
    func describe(_ error: any Error) -> String {
        error is CancellationError ? "cancelled" : redaction.redact(String(describing: error))
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
