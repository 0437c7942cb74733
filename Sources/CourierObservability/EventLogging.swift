#if Observability
    import Courier
    import Logging

    /// One structured log line per step: the step as the message, the call's facts as metadata.
    struct EventLogging: Sendable {
        let logger: Logger

        /// Logs `event`; `call` supplies the method and URL of steps that do not carry them.
        func log(_ event: ClientEvent, of call: CallState?) {
            let level = Self.level(of: event.kind)
            guard logger.logLevel <= level else { return }
            logger.log(level: level, "\(event.kind)", metadata: Self.metadata(of: event, call: call))
        }

        /// Failures are errors, a failed refresh a warning, a retry a notice, the ends of calls and refreshes info, and
        /// the steps in between debug. A cancelled call is routine (its caller left), so it is info.
        static func level(of kind: ClientEvent.Kind) -> Logger.Level {
            switch kind {
            case .requestFailed(let error, _): error == "cancelled" ? .info : .error
            case .tokenRefreshFailed, .circuitStateChanged, .retryBudgetDenied, .shed: .warning
            case .retryScheduled, .circuitRejected: .notice
            case .requestFinished, .tokenRefreshStarted, .tokenRefreshSucceeded: .info
            default: .debug
            }
        }

        /// `courier.call_id`, `courier.method` and `courier.url` on every line, plus what the step carries: `status`,
        /// `source`, `joined`, `attempt`, `duration_ms` (and `delay_ms`, `reason`, `error`).
        static func metadata(of event: ClientEvent, call: CallState?) -> Logger.Metadata {
            var metadata: Logger.Metadata = ["courier.call_id": "\(event.callID)"]
            if let call {
                metadata["courier.method"] = "\(call.method)"
                metadata["courier.url"] = "\(call.url)"
            }
            switch event.kind {
            case .requestStarted(let method, let url):
                metadata["courier.method"] = "\(method)"
                metadata["courier.url"] = "\(url)"
            case .joinedFlight(let leader):
                metadata["courier.joined"] = "true"
                metadata["courier.leader"] = "\(leader)"
            case .cacheHit(let stale):
                metadata["courier.stale"] = "\(stale)"
            case .attemptSent(let attempt, _):
                metadata["courier.attempt"] = "\(attempt)"
            case .responseReceived(let attempt, let status, let bytes, let duration):
                metadata["courier.attempt"] = "\(attempt)"
                metadata["courier.status"] = "\(status)"
                metadata["courier.bytes"] = "\(bytes)"
                metadata["courier.duration_ms"] = "\(duration.milliseconds)"
            case .retryScheduled(let attempt, let delay, let reason):
                metadata["courier.attempt"] = "\(attempt)"
                metadata["courier.delay_ms"] = "\(delay.milliseconds)"
                metadata["courier.reason"] = "\(reason)"
            case .requestFinished(let source, let status, let duration):
                metadata["courier.status"] = "\(status)"
                metadata["courier.source"] = "\(source)"
                metadata["courier.joined"] = "\(call?.joined ?? false)"
                metadata["courier.duration_ms"] = "\(duration.milliseconds)"
            case .requestFailed(let error, let duration):
                metadata["courier.error"] = "\(error)"
                metadata["courier.duration_ms"] = "\(duration.milliseconds)"
            case .tokenRefreshFailed(let reason):
                metadata["courier.error"] = "\(reason)"
            case .stored(let bytes):
                metadata["courier.bytes"] = "\(bytes)"
            case .evicted(let count), .invalidated(let count):
                metadata["courier.count"] = "\(count)"
            case .retryBudgetDenied(let attempt):
                metadata["courier.attempt"] = "\(attempt)"
            case .circuitStateChanged(let origin, let phase):
                metadata["courier.origin"] = "\(origin)"
                metadata["courier.circuit"] = "\(phase)"
            case .circuitRejected(let origin, let retryAfter):
                metadata["courier.origin"] = "\(origin)"
                metadata["courier.retry_after_ms"] = "\(retryAfter.milliseconds)"
            case .hedgeSent(let copy, let after):
                metadata["courier.copy"] = "\(copy)"
                metadata["courier.delay_ms"] = "\(after.milliseconds)"
            case .hedgeWon(let copy):
                metadata["courier.copy"] = "\(copy)"
            case .shed(let origin, let reason):
                metadata["courier.origin"] = "\(origin)"
                metadata["courier.reason"] = "\(reason)"
            case .cacheMiss, .revalidationSent, .revalidated, .tokenRefreshStarted, .tokenRefreshSucceeded:
                break
            }
            return metadata
        }
    }

    extension Duration {
        /// Milliseconds with microsecond precision, as a log or a dashboard wants them: `12.345`.
        var milliseconds: Double {
            let (seconds, attoseconds) = components
            return Double(seconds) * 1_000 + Double(attoseconds / 1_000_000_000_000) / 1_000
        }
    }
#endif
