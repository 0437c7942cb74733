#if Observability
    import CoreMetrics
    import Courier
    import Logging
    import Tracing

    /// Reports every call of an ``APIClient`` to swift-log, swift-metrics and swift-distributed-tracing: one structured
    /// log line per ``ClientEvent``, counters and timers that mirror ``APIClient/metrics``, and a span per call with a
    /// child span per attempt whose context travels to the server in the attempt's headers (W3C `traceparent` with an
    /// OpenTelemetry tracer).
    ///
    /// Setup is one line on the configuration; give only what you use:
    ///
    /// ```swift
    /// var configuration = APIClient.Configuration()
    /// configuration.observe(logger: logger, metrics: MetricsSystem.factory, tracer: InstrumentationSystem.tracer)
    /// ```
    ///
    /// It is a ``CallObserver``: called synchronously in the task where each step happens, so the call span's parent is
    /// the caller's `ServiceContext.current` (the span of the route that called, say), and the logger's metadata
    /// provider sees the caller's task-local values. Nothing it reports contains a credential: it reads only the
    /// events, which the client redacts.
    ///
    /// One instance may serve several clients: calls are told apart by their client's ``EventLog``.
    public struct CourierObservability: CallObserver {
        private let logging: EventLogging?
        private let metrics: EventMetrics?
        private let tracing: EventTracing?
        /// The calls in progress; shared by every copy of this value.
        let calls = CallTable()

        /// Creates an observer that reports to whichever of the three you give.
        ///
        /// - Parameters:
        ///   - logger: Receives one line per step. Failed calls log at `error`, failed token refreshes at `warning`,
        ///     retries at `notice`, finished calls and refreshes at `info`, every other step at `debug`. `nil`: no logs.
        ///   - metrics: Makes the counters and timers (see ``EventMetrics``); pass `MetricsSystem.factory` for the
        ///     bootstrapped backend. `nil`: no metrics.
        ///   - tracer: Starts the spans and injects their context into each attempt; `InstrumentationSystem.tracer` for
        ///     the bootstrapped one. `nil`: no spans.
        public init(logger: Logger? = nil, metrics: (any MetricsFactory)? = nil, tracer: (any Tracer)? = nil) {
            self.logging = logger.map(EventLogging.init)
            self.metrics = metrics.map(EventMetrics.init)
            self.tracing = tracer.map(EventTracing.init)
        }

        /// Logs, counts and traces one step.
        ///
        /// - Parameters:
        ///   - event: The step, already redacted.
        ///   - log: The event log of the client the call belongs to.
        public func record(_ event: ClientEvent, in log: EventLog) {
            let key = CallKey(log, event.callID)
            let call: CallState?
            switch event.kind {
            case .requestStarted(let method, let url):
                let span = tracing?.startCall(method: method, url: url)
                calls.begin(key, method: method, url: url, span: span)
                call = calls[key]
            case .requestFinished, .requestFailed:
                call = calls.end(key)
            case .cacheHit:
                call = calls.update(key) { state in
                    state.servedFromCache = true
                    return state
                }
            case .joinedFlight:
                call = calls.update(key) { state in
                    state.joined = true
                    return state
                }
            default:
                call = calls[key]
            }
            logging?.log(event, of: call)
            metrics?.record(event, of: call)
            tracing?.record(event, of: call, key: key, calls: calls)
        }

        /// Starts the attempt's span, a child of the call's, and injects its context into the attempt's headers.
        ///
        /// - Parameters:
        ///   - attempt: The attempt's number, from 1.
        ///   - callID: The call that sends it.
        ///   - log: The event log of the client the call belongs to.
        ///   - headers: Receives the trace context fields (`traceparent` with an OpenTelemetry tracer).
        public func prepareAttempt(_ attempt: Int, of callID: CallID, in log: EventLog, headers: inout HeaderFields) {
            tracing?.startAttempt(attempt, key: CallKey(log, callID), calls: calls, headers: &headers)
        }
    }

    extension APIClient.Configuration {
        /// Reports every call to a logger, a metrics backend and a tracer: appends a ``CourierObservability`` to
        /// ``observers``.
        ///
        /// ```swift
        /// configuration.observe(logger: logger, metrics: MetricsSystem.factory, tracer: InstrumentationSystem.tracer)
        /// ```
        ///
        /// - Parameters:
        ///   - logger: Receives one line per step; `nil` for none.
        ///   - metrics: Makes the counters and timers; `nil` for none.
        ///   - tracer: Starts a span per call and per attempt; `nil` for none.
        public mutating func observe(
            logger: Logger? = nil, metrics: (any MetricsFactory)? = nil, tracer: (any Tracer)? = nil
        ) {
            observers.append(CourierObservability(logger: logger, metrics: metrics, tracer: tracer))
        }
    }
#endif
