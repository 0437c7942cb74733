#if Observability
    import CoreMetrics
    import Courier

    /// The counters and timers a dashboard needs, made by an explicit `MetricsFactory` so that nothing depends on the
    /// global `MetricsSystem` being bootstrapped (tests pass their own factory and run in parallel).
    ///
    /// Each counter mirrors one of ``APIClient/Metrics``; once every call has ended, their sums equal the client's
    /// counters. Dimensions are few and bounded, so a dashboard can group by them: `method` on every metric, plus
    /// `status_class` (`2xx`…`5xx`, `failed`, `cancelled`) and `source` (`network`, `cache`, `revalidated`,
    /// `staleWhileRevalidate`, `none`) on what a call ends with.
    ///
    /// | label | kind | counts | dimensions |
    /// |---|---|---|---|
    /// | `courier_requests_total` | counter | calls, as they end | method, status_class, source |
    /// | `courier_upstream_calls_total` | counter | attempts handed to the transport | method |
    /// | `courier_joined_total` | counter | calls that shared another's flight | method |
    /// | `courier_cache_hits_total` | counter | calls the cache answered | method |
    /// | `courier_cache_misses_total` | counter | calls the cache could not answer | method |
    /// | `courier_cache_revalidations_total` | counter | stored responses confirmed by a `304` | method |
    /// | `courier_retries_total` | counter | attempts sent again | method |
    /// | `courier_token_refreshes_total` | counter | token refreshes started | method |
    /// | `courier_failures_total` | counter | calls that threw (not cancellation) | method |
    /// | `courier_cancellations_total` | counter | calls whose task was cancelled | method |
    /// | `courier_retry_budget_denials_total` | counter | retries the retry budget refused | method |
    /// | `courier_circuit_state_changes_total` | counter | circuit breaker moves | method, state |
    /// | `courier_circuit_rejections_total` | counter | attempts failed fast by an open breaker | method |
    /// | `courier_hedges_sent_total` | counter | hedged copies sent | method |
    /// | `courier_hedges_won_total` | counter | attempts a hedged copy answered first | method |
    /// | `courier_shed_total` | counter | calls a concurrency limit turned away | method, reason |
    /// | `courier_call_duration` | timer | each call, start to end | method, status_class, source |
    /// | `courier_attempt_duration` | timer | each attempt that got a response | method, status_class |
    struct EventMetrics: Sendable {
        let factory: any MetricsFactory

        /// Counts and times `event`; `call` supplies the method.
        func record(_ event: ClientEvent, of call: CallState?) {
            let method = [("method", call.map { "\($0.method)" } ?? "unknown")]
            switch event.kind {
            case .requestFinished(let source, let status, let duration):
                let dimensions = method + [("status_class", Self.statusClass(status)), ("source", "\(source)")]
                count("courier_requests_total", dimensions)
                time("courier_call_duration", duration, dimensions)
            case .requestFailed(let error, let duration):
                let outcome = error == "cancelled" ? "cancelled" : "failed"
                let dimensions = method + [("status_class", outcome), ("source", "none")]
                count("courier_requests_total", dimensions)
                count(outcome == "cancelled" ? "courier_cancellations_total" : "courier_failures_total", method)
                time("courier_call_duration", duration, dimensions)
            case .attemptSent:
                count("courier_upstream_calls_total", method)
            case .responseReceived(_, let status, _, let duration):
                time("courier_attempt_duration", duration, method + [("status_class", Self.statusClass(status))])
            case .joinedFlight:
                count("courier_joined_total", method)
            case .cacheHit:
                count("courier_cache_hits_total", method)
            case .cacheMiss:
                count("courier_cache_misses_total", method)
            case .revalidationSent:
                // After a stale hit the revalidation runs in the background: the call was a hit, not a miss.
                if call?.servedFromCache != true { count("courier_cache_misses_total", method) }
            case .revalidated:
                count("courier_cache_revalidations_total", method)
            case .retryScheduled:
                count("courier_retries_total", method)
            case .tokenRefreshStarted:
                count("courier_token_refreshes_total", method)
            case .retryBudgetDenied:
                count("courier_retry_budget_denials_total", method)
            case .circuitStateChanged(_, let phase):
                count("courier_circuit_state_changes_total", method + [("state", "\(phase)")])
            case .circuitRejected:
                count("courier_circuit_rejections_total", method)
            case .hedgeSent:
                count("courier_hedges_sent_total", method)
            case .hedgeWon:
                count("courier_hedges_won_total", method)
            case .shed(_, let reason):
                let label: String
                switch reason {
                case .queueFull: label = "queue_full"
                case .waitedPastDeadline: label = "deadline"
                }
                count("courier_shed_total", method + [("reason", label)])
            case .requestStarted, .stored, .evicted, .invalidated, .tokenRefreshSucceeded, .tokenRefreshFailed:
                break
            }
        }

        /// `2xx`, `3xx`, `4xx`, `5xx`, or `other` for a status outside 100–599.
        static func statusClass(_ status: Int) -> String {
            (100..<600).contains(status) ? "\(status / 100)xx" : "other"
        }

        private func count(_ label: String, _ dimensions: [(String, String)]) {
            Counter(label: label, dimensions: dimensions, factory: factory).increment()
        }

        private func time(_ label: String, _ duration: Duration, _ dimensions: [(String, String)]) {
            let (seconds, attoseconds) = duration.components
            let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
            let total = nanoseconds.overflow ? Int64.max : nanoseconds.partialValue &+ attoseconds / 1_000_000_000
            Timer(label: label, dimensions: dimensions, factory: factory).recordNanoseconds(max(0, total))
        }
    }
#endif
