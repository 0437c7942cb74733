/// The deadline of one attempt, kept on the client's clock and handed to the transport with the request.
///
/// A transport that can stop an exchange from outside (a callback-based one such as ``URLSessionTransport``)
/// enforces the deadline itself in ``HTTPTransport/send(_:deadline:)``: it asks to be told when the deadline
/// passes, stops the exchange then, and throws ``timeoutError``. That costs one entry in the client's deadline
/// heap. A transport that does not gets the default, which runs the attempt in a task of its own and races it
/// against the deadline: correct for any transport, at the price of a task per attempt.
public struct TransportDeadline: Sendable {
    /// How long the attempt may take, from when it was handed to the transport.
    public let timeout: Duration
    let scheduler: DeadlineScheduler
    /// When the attempt started, on the scheduler's time, when the caller already read it; `nil` for now.
    let start: Duration?

    /// A deadline of its own, `timeout` from when the transport is handed the request, for calling a transport
    /// directly (in its tests, or in a tool); ``APIClient`` makes the deadlines of its calls itself.
    ///
    /// ```swift
    /// let response = try await transport.send(request, deadline: TransportDeadline(timeout: .seconds(5)))
    /// ```
    ///
    /// - Parameters:
    ///   - timeout: How long the attempt may take.
    ///   - clock: The clock the deadline is kept on.
    public init(timeout: Duration, clock: any Clock<Duration> = ContinuousClock()) {
        self.init(timeout: timeout, scheduler: DeadlineScheduler(clock: clock))
    }

    init(timeout: Duration, scheduler: DeadlineScheduler, start: Duration? = nil) {
        self.timeout = timeout
        self.scheduler = scheduler
        self.start = start
    }

    /// The error an attempt that ran out of time throws: ``APIError/timedOut(_:)`` with ``timeout``.
    public var timeoutError: APIError { .timedOut(timeout) }

    /// Calls `expire` once, on the client's deadline task, when the deadline passes, unless the registration is
    /// cancelled first. Cancel it as soon as the attempt ends.
    ///
    /// - Parameter expire: What stops the exchange. It must not wait: it runs where every deadline of the client
    ///   fires.
    /// - Returns: The registration to cancel when the attempt ends first.
    public func onExpiry(_ expire: @escaping @Sendable () -> Void) -> Registration {
        let id =
            if let start { scheduler.schedule(at: start.saturatingAdding(timeout), expire) } else {
                scheduler.schedule(after: timeout, expire)
            }
        return Registration(id: id, scheduler: scheduler)
    }

    /// Runs `operation` in a task of its own, raced against the deadline: the caller gets ``timeoutError`` the moment
    /// the deadline passes, or `CancellationError` the moment it is cancelled, even from an operation that ignores
    /// cancellation; the operation is then cancelled and its late result dropped.
    ///
    /// This is what ``HTTPTransport/send(_:deadline:)`` does by default. A transport that stops its exchanges with
    /// ``onExpiry(_:)`` can still use it for the requests it cannot stop that way.
    ///
    /// - Parameter operation: The exchange.
    /// - Returns: What `operation` returned, when it ended first.
    /// - Throws: ``timeoutError`` past the deadline, `CancellationError`, or what `operation` threw.
    public func race<Value: Sendable>(_ operation: @escaping @Sendable () async throws -> Value) async throws -> Value {
        try await Deadline.run(self, operation: operation)
    }

    /// A pending call of ``TransportDeadline/onExpiry(_:)``.
    public struct Registration: Sendable {
        let id: UInt64
        let scheduler: DeadlineScheduler

        /// Forgets the registration: the expiry handler will not run (if it has not already).
        public func cancel() { scheduler.cancel(id) }
    }
}
