import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One streamed URLSession exchange of ``URLSessionTransport/stream(_:)``: the head is returned as soon as it
/// arrives, and the body is handed to one reader through a bounded ``StreamingBuffer``.
///
/// ## Back-pressure
///
/// FoundationNetworking cannot pause a transfer: `URLSessionTask.suspend()` removes libcurl's handle from the
/// session, and in a loopback test data kept arriving while suspended (3 MB/s after the suspend, the whole body in
/// the end); resuming a suspended task sent the request again and appended the body from its start. What does stop
/// libcurl is its write callback not returning: it runs on the session's work queue and hands each chunk to the
/// delegate queue. So every streamed exchange gets a session of its own whose delegate queue runs operations inline
/// (``InlineDelegateQueue``): the delegate's `didReceive(_:)` runs inside libcurl's callback, and once
/// ``URLSessionTransport/streamPauseBytes`` wait unread it waits there until the reader drains them. libcurl then
/// stops reading the socket, TCP's window closes, and the server waits. That wait is bounded (`longestWait`),
/// because all sessions of the process share one work queue: see `urlSession(_:dataTask:didReceive:)`. The cost is
/// a session per stream (no connection reuse between streams), small next to a body worth streaming.
///
/// ## Ending
///
/// The reader's cancellation, a reader that lets the body go unread, and the caller's cancellation while waiting
/// for the head all cancel the task: the blocked callback is woken first (so that `cancel()`, which waits for the
/// work queue, never waits for a reader), then the task is cancelled from ``queue``. The session is invalidated once
/// the task completes, which releases this delegate.
final class URLSessionStreamingExchange: NSObject, URLSessionDataDelegate, Sendable {
    private struct State {
        var head: CheckedContinuation<HTTPURLResponse, any Error>?
        var headArrived = false
        var body: StreamingBuffer
        var cancelled = false
        var challenged: HTTPURLResponse?
        var failure: (any Error)?
        var session: URLSession?
        var task: URLSessionTask?
    }

    private let state: Locked<State>
    private let producerWake = DispatchSemaphore(value: 0)
    /// The longest a delivery callback waits for the reader (see `urlSession(_:dataTask:didReceive:)`).
    static let longestWait = DispatchTimeInterval.milliseconds(50)
    /// Where the session is made, its task resumed and cancelled, and the session invalidated: each of them waits
    /// for the session's work queue, which must never be this exchange's blocked callback.
    private let queue = DispatchQueue(label: "Courier.URLSessionStreamingExchange")
    private let request: URLRequest
    private let origin: URL
    private let credentialHeaderNames: Set<String>
    private let hasStreamedBody: Bool
    /// Told the size of each part of the streamed body that URLSession reports sent.
    private let bodySent: (@Sendable (Int) -> Void)?
    /// How far the reader may fall behind before the stream ends (see ``URLSessionTransport/streamBufferBytes``).
    private let bufferLimit: Int

    init(
        request: URLRequest, origin: URL, credentialHeaderNames: Set<String>, bufferLimit: Int,
        hasStreamedBody: Bool, bodySent: (@Sendable (Int) -> Void)? = nil
    ) {
        self.bodySent = bodySent
        self.request = request
        self.origin = origin
        self.credentialHeaderNames = credentialHeaderNames
        self.hasStreamedBody = hasStreamedBody
        self.bufferLimit = bufferLimit
        self.state = Locked(
            State(body: StreamingBuffer(limit: bufferLimit, pauseAt: URLSessionTransport.streamPauseBytes)))
    }

    // MARK: Driving the Exchange

    /// Starts the task in a session of its own and waits for the head.
    ///
    /// - Throws: The translated failure, or `CancellationError` when the calling task is cancelled first.
    func start(configuration: URLSessionConfiguration) async throws -> HTTPURLResponse {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let proceed = state.withLock { state in
                    if !state.cancelled { state.head = continuation }
                    return !state.cancelled
                }
                guard proceed else { return continuation.resume(throwing: CancellationError()) }
                queue.async { [self] in
                    let session = URLSession(
                        configuration: configuration, delegate: self, delegateQueue: InlineDelegateQueue())
                    let task = session.dataTask(with: request)
                    let started = state.withLock { state in
                        state.session = session
                        state.task = task
                        return !state.cancelled
                    }
                    if started { task.resume() } else { session.invalidateAndCancel() }
                }
            }
        } onCancel: {
            cancel()
        }
    }

    /// The body, read once; dropping it unread, or cancelling its reader, cancels the transfer.
    func body() -> ByteStream {
        let reader = Reader(exchange: self)
        return ByteStream(next: { try await reader.next() })
    }

    /// Stops the exchange for good: the head waiter and the reader get `CancellationError`, the callback blocked on
    /// a full buffer is woken, and the task is cancelled.
    func cancel() {
        let (head, ended, task, session) = state.withLock { state in
            state.cancelled = true
            defer { state.head = nil }
            return (
                state.head, state.body.finish(.failure(CancellationError()), discarding: true), state.task,
                state.session
            )
        }
        head?.resume(throwing: CancellationError())
        ended?.reader?.resume(throwing: CancellationError())
        if ended?.wakeProducer == true { producerWake.signal() }
        if let task {
            queue.async { task.cancel() }
        } else if let session {
            queue.async { session.invalidateAndCancel() }
        }
    }

    fileprivate func next() async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                switch state.withLock({ $0.body.pull(continuation) }) {
                case .chunk(let chunk, let wake):
                    if wake { producerWake.signal() }
                    continuation.resume(returning: chunk)
                case .end: continuation.resume(returning: nil)
                case .failed(let error): continuation.resume(throwing: error)
                case .wait: break
                }
            }
        } onCancel: {
            cancel()
        }
    }

    // MARK: Delegate Callbacks (inline, on the session's work queue)

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        guard let head = response as? HTTPURLResponse else {
            fail(APIError.transport(.badServerResponse, underlying: URLError(.badServerResponse)))
            return completionHandler(.cancel)
        }
        if let coding = URLSessionTransport.undecodableCoding(of: head) {
            fail(URLSessionTransport.undecodableCodingError(coding))
            return completionHandler(.cancel)
        }
        let waiter = state.withLock { state in
            state.headArrived = true
            defer { state.head = nil }
            return state.head
        }
        waiter?.resume(returning: head)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        switch state.withLock({ $0.body.push(data) }) {
        case .proceed: break
        case .deliver(let reader, let chunk): reader.resume(returning: chunk)
        case .wait:
            // Back-pressure, bounded in time: while this callback waits libcurl reads no more, TCP's window closes
            // and the server waits. But every URLSession of the process runs its callbacks on one shared queue, so
            // the wait stops them all, and the reader may need a thread that one of them holds: so it never lasts
            // longer than `longestWait`. A wait that runs out means the reader is stalled, not slow; the buffer then
            // takes the bytes (to `bufferLimit`) without waiting again until the reader has caught up.
            if producerWake.wait(timeout: .now() + Self.longestWait) == .timedOut,
                state.withLock({ $0.body.producerStoppedWaiting() })
            {
                producerWake.wait()  // the wake-up sent as the wait ran out: taken, so that it ends no later wait
            }
        case .overflow:
            // A reader this far behind ends the stream rather than let memory grow; what is buffered is still
            // delivered first.
            endBody(.failure(APIError.responseTooLarge(limit: bufferLimit)))
            queue.async { dataTask.cancel() }
        }
    }

    /// A `401` with a challenge: answered with the response itself, as ``URLSessionExchange`` does.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard let failure = challenge.failureResponse as? HTTPURLResponse else {
            return completionHandler(.performDefaultHandling, nil)
        }
        state.withLock { $0.challenged = failure }
        queue.async { completionHandler(.cancelAuthenticationChallenge, nil) }
    }

    /// Redirects are followed without credentials across origins; a 307 or 308 of a streamed body is returned as it
    /// is, since the body cannot be assumed to replay.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        if hasStreamedBody, response.statusCode == 307 || response.statusCode == 308 { return completionHandler(nil) }
        completionHandler(
            RedirectGuard.redirect(newRequest, from: origin, credentialHeaderNames: credentialHeaderNames))
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        // The body went to a temporary file before the task started (see `URLSessionTransport.spool`), so the
        // reads of it said nothing about the network: this does, and keeps a slow upload's deadline moving.
        bodySent?(Int(clamping: bytesSent))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (head, result) = state.withLock {
            state -> (CheckedContinuation<HTTPURLResponse, any Error>?, Result<Void, any Error>) in
            defer {
                state.head = nil
                state.task = nil
            }
            return (state.head, outcome(of: state, error: error, task: task))
        }
        if let head {
            if case .failure(let error) = result {
                head.resume(throwing: error)
            } else if let response = state.withLock({ $0.challenged }) ?? task.response as? HTTPURLResponse {
                head.resume(returning: response)
            } else {
                head.resume(throwing: APIError.transport(.badServerResponse, underlying: URLError(.badServerResponse)))
            }
        }
        endBody(result)
        queue.async { session.finishTasksAndInvalidate() }
    }

    // MARK: Completing

    private func fail(_ error: any Error) {
        state.withLock { state in
            if state.failure == nil { state.failure = error }
        }
    }

    private func endBody(_ result: Result<Void, any Error>) {
        guard let ended = state.withLock({ $0.body.finish(result) }) else { return }
        switch result {
        case .success: ended.reader?.resume(returning: nil)
        case .failure(let error): ended.reader?.resume(throwing: error)
        }
        if ended.wakeProducer { producerWake.signal() }
    }

    private func outcome(of state: State, error: (any Error)?, task: URLSessionTask) -> Result<Void, any Error> {
        if let failure = state.failure { return .failure(failure) }
        if state.challenged != nil { return .success(()) }
        guard let error else { return .success(()) }
        let head = task.response as? HTTPURLResponse
        return .failure(
            URLSessionTransport.translate(
                error, for: request.url, cancelledByCaller: state.cancelled,
                received: state.headArrived ? head.map { ($0, 0) } : nil))
    }
}

extension URLSessionStreamingExchange {
    /// The reader's handle on the exchange: when the body is let go (every copy of the stream and its iterator
    /// released) before it ended, the transfer is cancelled rather than left to fill the buffer and block.
    private final class Reader: Sendable {
        let exchange: URLSessionStreamingExchange
        init(exchange: URLSessionStreamingExchange) { self.exchange = exchange }
        func next() async throws -> Data? { try await exchange.next() }
        deinit { exchange.cancel() }
    }
}

/// A delegate queue that runs every operation at once, on the thread that adds it. FoundationNetworking adds the
/// delegate callbacks of a task from libcurl's callbacks, on the session's work queue, so with this queue a
/// delegate that does not return holds libcurl back: the back-pressure of ``URLSessionStreamingExchange``.
///
/// `@unchecked Sendable` only restates `OperationQueue`'s own conformance, as Swift requires of a subclass; the
/// queue adds no state.
final class InlineDelegateQueue: OperationQueue, @unchecked Sendable {
    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        block()
    }

    override func addOperation(_ operation: Operation) {
        operation.start()
    }
}
