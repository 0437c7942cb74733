/// Identifies one call of ``APIClient``'s `send(_:)` in the events of its client.
///
/// Ids are unique per ``APIClient`` and increase in the order calls start, so `#12` started after `#11`.
public struct CallID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The number of the call, starting at 1 for a client's first call.
    public let rawValue: UInt64

    /// Creates an id, for tests and for code that emits its own events into an ``EventLog``.
    ///
    /// - Parameter rawValue: The number of the call.
    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// Orders ids by number, which is the order their calls started.
    public static func < (lhs: CallID, rhs: CallID) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// `#` followed by the number: `#12`.
    public var description: String { "#\(rawValue)" }
}

/// One step of one call: what happened, to which call, and when.
///
/// Every event has the same three parts, so it is a struct around an enum of steps rather than an enum
/// whose every case repeats the id and the time: a subscriber filters by ``callID`` or sorts by ``at``
/// without switching over every case, and a step is matched on its own (`case .joinedFlight(let leader)`).
///
/// ```swift
/// for await event in client.events {
///     if case .retryScheduled(let attempt, let delay, let reason) = event.kind {
///         logger.warning("\(event.callID) attempt \(attempt) failed (\(reason)), retrying in \(delay)")
///     }
/// }
/// ```
///
/// - Important: Events never contain a credential. URLs and headers are redacted before an event is built:
///   the values of the header fields and query parameters that ``APIClient/Configuration/credentials`` names
///   (the standard ones, your own, and what the `authorize` closure writes) and URL passwords read `<redacted>`,
///   and so do error descriptions.
public struct ClientEvent: Sendable, Hashable, CustomStringConvertible {
    /// The call this step belongs to.
    public let callID: CallID
    /// When it happened: time elapsed on the client's ``APIClient/Configuration/clock`` since the ``EventLog``
    /// was created. The events one subscriber receives never go back in time.
    public let at: Duration
    /// What happened.
    public let kind: Kind

    /// Creates an event.
    ///
    /// - Parameters:
    ///   - callID: The call the step belongs to.
    ///   - at: Time elapsed since the log was created.
    ///   - kind: What happened.
    public init(callID: CallID, at: Duration, kind: Kind) {
        self.callID = callID
        self.at = at
        self.kind = kind
    }

    /// The steps of a call, in the order they can happen.
    ///
    /// A call starts with ``requestStarted(method:url:)`` and ends with ``requestFinished(source:status:duration:)``
    /// or ``requestFailed(error:duration:)``. In between come the cache's answer, the shared flight, the attempts
    /// and what happened to them. Steps that run inside a shared flight (attempts, retries, refreshes, storing)
    /// carry the id of the call that led the flight; a joiner sees ``joinedFlight(leader:)`` instead.
    public enum Kind: Sendable, Hashable {
        /// The call began. The URL is redacted.
        case requestStarted(method: RequestMethod, url: String)
        /// The call shared the flight of an identical call, `leader`, and got its result. Sent when the result
        /// arrives: the call's own attempts did not happen.
        case joinedFlight(leader: CallID)
        /// The cache answered without waiting for the server: a fresh response, or a stale one that the request or
        /// the response allows (`stale` is then `true`).
        case cacheHit(stale: Bool)
        /// The cache held nothing usable, so the request goes to the server.
        case cacheMiss
        /// The cache holds a stale response with a validator: a conditional request is sent to confirm it. After a
        /// stale hit under `stale-while-revalidate`, the revalidation runs in the background and its steps may come
        /// after ``requestFinished(source:status:duration:)``.
        case revalidationSent
        /// The server answered the conditional request with `304 Not Modified`: the stored body is served.
        case revalidated
        /// The response was stored in the cache; `bytes` as the cache counts them (headers and body).
        case stored(bytes: Int)
        /// Storing the response evicted `count` least recently used entries.
        case evicted(count: Int)
        /// A successful unsafe request (`POST`, `PUT`, `DELETE`…) removed `count` stored responses.
        case invalidated(count: Int)
        /// Attempt number `attempt` (from 1; the resend after a token refresh counts) was handed to the transport
        /// with these headers, credentials redacted.
        case attemptSent(attempt: Int, headers: HeaderFields)
        /// The server answered attempt number `attempt`: its status, body size, and how long the attempt took.
        case responseReceived(attempt: Int, status: Int, bytes: Int, duration: Duration)
        /// Attempt number `attempt` failed and the retry policy sends it again after `delay`.
        case retryScheduled(attempt: Int, delay: Duration, reason: RetryReason)
        /// A token refresh started on behalf of this call (other calls may wait for it too).
        case tokenRefreshStarted
        /// The refresh produced a new credential. The token itself is never part of an event.
        case tokenRefreshSucceeded
        /// The refresh failed; the reason is redacted.
        case tokenRefreshFailed(reason: String)
        /// The call returned a response: where it came from, its status, and how long the whole call took.
        case requestFinished(source: ResponseSource, status: Int, duration: Duration)
        /// The retry policy would have retried after attempt number `attempt`, but the ``RetryBudget`` was spent.
        case retryBudgetDenied(attempt: Int)
        /// The ``CircuitBreaker`` of `origin` moved to `phase`.
        case circuitStateChanged(origin: String, phase: CircuitBreaker.Phase)
        /// The open ``CircuitBreaker`` of `origin` failed the call at once; it lets a probe through after `retryAfter`.
        case circuitRejected(origin: String, retryAfter: Duration)
        /// The attempt had no acceptable answer after `after`, so copy number `copy` (from 2) was sent.
        case hedgeSent(copy: Int, after: Duration)
        /// Copy number `copy` (from 2) answered first; the others were cancelled.
        case hedgeWon(copy: Int)
        /// The ``ConcurrencyLimit`` of `origin` turned the attempt away. The wait for a place is part of the attempt
        /// (within its deadline), so this follows ``attemptSent(attempt:headers:)``; nothing reached the transport.
        case shed(origin: String, reason: ShedReason)
        /// The call threw: the error's redacted description (`cancelled` for cancellation) and how long it took.
        case requestFailed(error: String, duration: Duration)
    }

    /// Why an attempt is retried.
    public enum RetryReason: Sendable, Hashable, CustomStringConvertible {
        /// The server answered with a status the retry policy retries, such as 503.
        case status(Int)
        /// The attempt failed without a response; carries the error's redacted description.
        case failure(String)

        /// `status 503`, or the failure's description.
        public var description: String {
            switch self {
            case .status(let status): "status \(status)"
            case .failure(let description): description
            }
        }
    }

    /// `#12 +3.2ms joined #11`: the id, the time, and the step, on one line.
    public var description: String {
        "\(callID) +\(at.formattedMilliseconds) \(kind)"
    }
}

extension ClientEvent.Kind: CustomStringConvertible {
    /// The step as a short phrase, such as `attempt 2 sent` or `← 200, 512 bytes in 3.1ms`.
    public var description: String {
        switch self {
        case .requestStarted(let method, let url): "started \(method) \(url)"
        case .joinedFlight(let leader): "→ joined \(leader)"
        case .cacheHit(let stale): stale ? "cache hit (stale)" : "cache hit (fresh)"
        case .cacheMiss: "cache miss"
        case .revalidationSent: "revalidation sent"
        case .revalidated: "revalidated (304)"
        case .stored(let bytes): "stored \(bytes) bytes"
        case .evicted(let count): "evicted \(count) \(count == 1 ? "entry" : "entries")"
        case .invalidated(let count): "invalidated \(count) \(count == 1 ? "entry" : "entries")"
        case .attemptSent(let attempt, _): "attempt \(attempt) sent"
        case .responseReceived(let attempt, let status, let bytes, let duration):
            "← \(status), \(bytes) bytes in \(duration.formattedMilliseconds) (attempt \(attempt))"
        case .retryScheduled(let attempt, let delay, let reason):
            "retry after attempt \(attempt) in \(delay.formattedMilliseconds): \(reason)"
        case .tokenRefreshStarted: "token refresh started"
        case .tokenRefreshSucceeded: "token refresh succeeded"
        case .tokenRefreshFailed(let reason): "token refresh failed: \(reason)"
        case .retryBudgetDenied(let attempt): "retry after attempt \(attempt) denied: the retry budget is spent"
        case .circuitStateChanged(let origin, let phase): "circuit of \(origin) \(phase)"
        case .circuitRejected(let origin, let retryAfter):
            "circuit of \(origin) open: failed fast, probe in \(retryAfter.formattedMilliseconds)"
        case .hedgeSent(let copy, let after): "hedge: copy \(copy) sent after \(after.formattedMilliseconds)"
        case .hedgeWon(let copy): "hedge: copy \(copy) answered first"
        case .shed(let origin, let reason): "shed by the limit of \(origin): \(reason)"
        case .requestFinished(let source, let status, let duration):
            "finished \(status) from \(source) in \(duration.formattedMilliseconds)"
        case .requestFailed(let error, let duration): "failed in \(duration.formattedMilliseconds): \(error)"
        }
    }
}

extension Duration {
    /// The duration in milliseconds with one decimal, for event lines: `"3.2ms"`. Clamped to
    /// `saturationLimit` first, so that a custom retry delay of `.seconds(Int64.max)` cannot overflow the count.
    var formattedMilliseconds: String {
        let (seconds, attoseconds) = saturated.components
        let tenths = seconds * 10_000 + attoseconds / 100_000_000_000_000
        let sign = tenths < 0 ? "-" : ""
        let magnitude = tenths.magnitude
        return "\(sign)\(magnitude / 10).\(magnitude % 10)ms"
    }
}
