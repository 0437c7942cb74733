import Foundation

/// Decides whether a failed attempt is sent again, and after how long.
///
/// The default policy is the one worth defending for a service calling an API:
/// - at most **3 attempts**;
/// - exponential backoff of 0.5 s × 2ⁿ, capped at 30 s, with **full jitter** (a random delay between
///   zero and the backoff), so a fleet of clients that failed together does not retry together;
/// - only **idempotent methods** (`GET`, `HEAD`, `PUT`, `DELETE`, `OPTIONS`, `TRACE`), or any method
///   whose request carries an `Idempotency-Key` header, because resending a `POST` may do its work twice;
/// - only statuses that say "try again": **408, 429, 500, 502, 503, 504**;
/// - only **transient transport failures**: timeouts, refused connections, dropped connections,
///   DNS failures, no network;
/// - a `Retry-After` header (seconds or HTTP-date) replaces the backoff. When the server asks for more
///   than ``maximumRetryAfter`` (60 s by default) the response is returned instead of waiting that long.
///
/// Retries sleep on the client's injected clock and stop at once when the caller cancels. With
/// ``APIClient``'s coalescing, retries happen inside the shared flight: joiners never multiply them.
///
/// To decide yourself, start from ``custom(maxAttempts:_:)``:
///
/// ```swift
/// let policy = RetryPolicy.custom(maxAttempts: 5) { context in
///     context.statusCode == 409 ? .retry(after: .milliseconds(100)) : .doNotRetry
/// }
/// ```
public struct RetryPolicy: Sendable {
    /// How a delay is spread.
    public enum Jitter: Sendable, Hashable {
        /// A uniformly random delay between zero and the backoff ("full jitter").
        case full
        /// Exactly the backoff. Deterministic: useful in tests.
        case none
    }

    /// The most attempts one call makes, the first included. `1` disables retries.
    public var maxAttempts: Int
    /// The backoff before the first retry; doubled for every further retry.
    public var baseDelay: Duration
    /// The longest backoff.
    public var maximumDelay: Duration
    /// How the backoff is randomized.
    public var jitter: Jitter
    /// The response statuses that are retried.
    public var retryableStatusCodes: Set<Int>
    /// The transport failures that are retried.
    public var retryableFailures: Set<TransportFailure>
    /// The methods retried without an `Idempotency-Key`.
    public var idempotentMethods: Set<RequestMethod>
    /// The longest `Retry-After` honoured; a longer one ends the retries.
    public var maximumRetryAfter: Duration

    /// Set only by ``custom(maxAttempts:_:)``: replaces the built-in rules.
    private var decide: (@Sendable (RetryContext) -> RetryDecision)?

    /// Creates a policy. Every parameter defaults to the values described on ``RetryPolicy``.
    ///
    /// - Parameters:
    ///   - maxAttempts: The most attempts one call makes, the first included.
    ///   - baseDelay: The backoff before the first retry.
    ///   - maximumDelay: The longest backoff.
    ///   - jitter: How the backoff is randomized.
    ///   - retryableStatusCodes: The response statuses that are retried.
    ///   - retryableFailures: The transport failures that are retried.
    ///   - idempotentMethods: The methods retried without an `Idempotency-Key`.
    ///   - maximumRetryAfter: The longest `Retry-After` honoured.
    public init(
        maxAttempts: Int = 3,
        baseDelay: Duration = .milliseconds(500),
        maximumDelay: Duration = .seconds(30),
        jitter: Jitter = .full,
        retryableStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504],
        retryableFailures: Set<TransportFailure> = [
            .timedOut, .cannotConnect, .connectionLost, .dnsFailure, .notConnected,
        ],
        idempotentMethods: Set<RequestMethod> = [.get, .head, .put, .delete, .options, .trace],
        maximumRetryAfter: Duration = .seconds(60)
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.jitter = jitter
        self.retryableStatusCodes = retryableStatusCodes
        self.retryableFailures = retryableFailures
        self.idempotentMethods = idempotentMethods
        self.maximumRetryAfter = maximumRetryAfter
        self.decide = nil
    }

    /// The default policy.
    public static var `default`: RetryPolicy { RetryPolicy() }

    /// A policy that never retries.
    public static var never: RetryPolicy { RetryPolicy(maxAttempts: 1) }

    /// A policy that asks `decide` after every failed attempt, up to `maxAttempts` attempts.
    ///
    /// - Parameters:
    ///   - maxAttempts: The most attempts one call makes; `decide` is not asked after the last one.
    ///   - decide: Called after an attempt that failed or returned a status outside 2xx.
    public static func custom(
        maxAttempts: Int, _ decide: @escaping @Sendable (RetryContext) -> RetryDecision
    ) -> RetryPolicy {
        var policy = RetryPolicy(maxAttempts: maxAttempts)
        policy.decide = decide
        return policy
    }

    // MARK: Deciding

    /// What to do after an attempt: retry after a delay, or stop.
    ///
    /// - Parameter context: The attempt that just ended and how it ended.
    /// - Returns: ``RetryDecision/retry(after:)`` or ``RetryDecision/doNotRetry``.
    public func decision(for context: RetryContext) -> RetryDecision {
        guard context.attempt < maxAttempts else { return .doNotRetry }
        if let decide {
            // A custom delay is slept on the client's clock, which traps past its range: saturate it.
            guard case .retry(let delay) = decide(context) else { return .doNotRetry }
            return .retry(after: delay.saturatedDelay)
        }
        guard mayResend(context.request) else { return .doNotRetry }
        switch context.outcome {
        case .response(let response):
            guard retryableStatusCodes.contains(response.statusCode) else { return .doNotRetry }
            if let requested = RetryAfter.delay(in: response.headers, now: context.now) {
                return requested <= maximumRetryAfter ? .retry(after: requested) : .doNotRetry
            }
            return .retry(after: backoff(afterAttempt: context.attempt))
        case .failure(let error):
            guard isTransient(error) else { return .doNotRetry }
            return .retry(after: backoff(afterAttempt: context.attempt))
        }
    }

    /// The delay before the retry that follows attempt number `attempt` (1-based), jitter applied.
    ///
    /// Never traps, whatever the attempt number and delays: the doubling stops as soon as it reaches
    /// ``maximumDelay``, negative delays count as zero, and no delay exceeds about 292 years (`Int64.max` ns).
    ///
    /// - Parameter attempt: The number of the attempt that just failed, starting at 1.
    /// - Returns: ``baseDelay`` doubled for every attempt after the first, at most ``maximumDelay``, spread as
    ///   ``jitter`` says.
    public func backoff(afterAttempt attempt: Int) -> Duration {
        let cap = maximumDelay.saturatedDelay
        var ceiling = min(baseDelay.saturatedDelay, cap)
        // Clamped before multiplying: doubling a value below the cap stays below twice the saturation limit, and a
        // positive value reaches the cap within about 93 doublings, so the loop is short for any `attempt`.
        var doublings = 0
        while doublings + 1 < attempt, ceiling > .zero, ceiling < cap {
            ceiling = min(ceiling * 2, cap)
            doublings += 1
        }
        switch jitter {
        case .none: return ceiling
        case .full: return ceiling * Double.random(in: 0...1)
        }
    }

    /// Whether `request` may be sent twice: its method is one of ``idempotentMethods``, or it carries an
    /// `Idempotency-Key`. The one rule for everything that sends a request again: the client asks it before any
    /// policy (a custom one included), before a hedge, and before an event stream reconnects.
    func mayResend(_ request: TransportRequest) -> Bool {
        mayResend(method: request.method, headers: request.headers)
    }

    func mayResend(method: RequestMethod, headers: HeaderFields) -> Bool {
        idempotentMethods.contains(method) || headers.contains("Idempotency-Key")
    }

    private func isTransient(_ error: APIError) -> Bool {
        switch error {
        case .transport(let failure, _): retryableFailures.contains(failure)
        case .timedOut: retryableFailures.contains(.timedOut)
        default: false
        }
    }
}

/// What a ``RetryPolicy`` decided.
public enum RetryDecision: Sendable, Hashable {
    /// Send the request again after this delay.
    case retry(after: Duration)
    /// Stop: the last response or error is the answer.
    case doNotRetry
}

/// An attempt that just ended, as a ``RetryPolicy`` sees it.
public struct RetryContext: Sendable {
    /// How an attempt ended.
    public enum Outcome: Sendable {
        /// The server answered with a status the client does not accept.
        case response(TransportResponse)
        /// The attempt failed before a response arrived.
        case failure(APIError)
    }

    /// The request as it was sent (after adapters ran).
    public let request: TransportRequest
    /// The number of the attempt that just ended, starting at 1. The resend after a token refresh (see
    /// ``APIClient/Configuration/authenticator``) is not counted, so it never uses up a retry.
    public let attempt: Int
    /// How it ended.
    public let outcome: Outcome
    /// The current date, from the client's date source: used to read an HTTP-date `Retry-After`.
    public let now: Date

    /// Creates a context, for example to test a policy.
    ///
    /// - Parameters:
    ///   - request: The request as it was sent.
    ///   - attempt: The number of the attempt that just ended, starting at 1.
    ///   - outcome: How it ended.
    ///   - now: The current date.
    public init(request: TransportRequest, attempt: Int, outcome: Outcome, now: Date) {
        self.request = request
        self.attempt = attempt
        self.outcome = outcome
        self.now = now
    }

    /// The status code, when the server answered.
    public var statusCode: Int? {
        if case .response(let response) = outcome { return response.statusCode }
        return nil
    }
}
