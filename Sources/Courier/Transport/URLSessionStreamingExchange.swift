import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One streamed URLSession exchange of ``URLSessionTransport/stream(_:)``: the head is returned as soon as it
/// arrives, and the body is handed to one reader through a bounded ``StreamingBuffer``.
///
/// ## Back-pressure
///
/// No delivery callback ever waits for the reader. On Linux every URLSession of the process runs its libcurl work,
/// and so its callbacks, on one shared queue: a callback that waited there for a slow reader stopped every other
/// request of the process with it. And FoundationNetworking cannot pause a transfer: `URLSessionTask.suspend()`
/// removes libcurl's handle from the session, and in a loopback test data kept arriving while suspended (3 MB/s
/// after the suspend, the whole body in the end); resuming a suspended task sent the request again and appended the
/// body from its start. So on Linux the bytes are buffered, up to ``URLSessionTransport/streamBufferBytes``, and a
/// reader that falls that far behind ends the stream with ``APIError/responseTooLarge(limit:)``: TCP never pushes
/// back on the server, and a consumer that may stop for long needs a transport with real back-pressure (the
/// AsyncHTTPClient one). Apple's URLSession does pause a suspended task, so there the task is suspended once
/// ``URLSessionTransport/streamPauseBytes`` wait unread and resumed once the reader drained them to a quarter.
///
/// Each streamed exchange has a session of its own (no connection reuse between streams, small next to a body worth
/// streaming), whose delegate, on Linux, runs inline on libcurl's callbacks (``InlineDelegateQueue``): each callback
/// only takes the lock.
///
/// ## Ending
///
/// The reader's cancellation, a reader that lets the body go unread, and the caller's cancellation while waiting
/// for the head all cancel the task, from ``queue`` (`cancel()` waits for the session's work queue). The session is invalidated once
/// the task completes, which releases this delegate.
final class URLSessionStreamingExchange: NSObject, URLSessionDataDelegate, Sendable {
    private typealias Machine = URLSessionStreamingExchangeStateMachine<
        CheckedContinuation<HTTPURLResponse, any Error>, URLSession, URLSessionTask
    >

    /// Where the exchange is (``URLSessionStreamingExchangeStateMachine``), and what the server's answer said.
    private struct State {
        var machine: Machine
        /// The `401` a challenge was answered with: the head to return.
        var challenged: HTTPURLResponse?
        /// Why the exchange failed the task itself (a response that is not HTTP, an undecodable coding).
        var failure: (any Error)?
    }

    private let state: Locked<State>
    /// How many unread bytes pause the task: never on Linux, where pausing is not possible (see "Back-pressure").
    static let pauseAt: Int? = {
        #if canImport(FoundationNetworking)
            return nil
        #else
            return URLSessionTransport.streamPauseBytes
        #endif
    }()
    /// Where the session is made, its task resumed, suspended and cancelled, and the session invalidated: each of
    /// them waits for the session's work queue, which must never be one of this exchange's callbacks.
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
            State(machine: Machine(body: StreamingBuffer(limit: bufferLimit, pauseAt: Self.pauseAt))))
    }

    // MARK: Driving the Exchange

    /// Starts the task in a session of its own and waits for the head.
    ///
    /// - Throws: The translated failure, or `CancellationError` when the calling task is cancelled first.
    func start(configuration: URLSessionConfiguration) async throws -> HTTPURLResponse {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard state.withLock({ $0.machine.waitForHead(continuation) }) else {
                    return continuation.resume(throwing: CancellationError())
                }
                queue.async { [self] in
                    let session = URLSession(
                        configuration: configuration, delegate: self,
                        delegateQueue: InlineDelegateQueue.whereThePlatformNeedsIt())
                    let task = session.dataTask(with: request)
                    switch state.withLock({ $0.machine.sessionMade(session, task: task) }) {
                    case .resume(let task): task.resume()
                    case .invalidate(let session): session.invalidateAndCancel()
                    }
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

    /// Stops the exchange for good: the head waiter and the reader get `CancellationError`, and the task is
    /// cancelled.
    func cancel() {
        let action = state.withLock { $0.machine.cancel() }
        action.head?.resume(throwing: CancellationError())
        action.reader?.resume(throwing: CancellationError())
        if let task = action.cancelTask {
            queue.async { task.cancel() }
        } else if let session = action.invalidate {
            queue.async { session.invalidateAndCancel() }
        }
    }

    fileprivate func next() async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let pulled = state.withLock { state in
                    let (pulled, resume) = state.machine.pull(continuation)
                    // Enqueued inside the lock, as the pause is, so that the task sees them in the order decided.
                    if let resume { queue.async { resume.resume() } }
                    return pulled
                }
                switch pulled {
                case .chunk(let chunk, _):
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

    // MARK: Delegate Callbacks (on Linux inline, on the session's work queue: none of them waits)

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
        let waiter = state.withLock { $0.machine.headDidArrive() }
        waiter?.resume(returning: head)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let pushed = state.withLock { state in
            let pushed = state.machine.push(data)
            // Enqueued inside the lock, as the resume is, so that the task sees them in the order decided.
            if case .pause = pushed { queue.async { dataTask.suspend() } }
            return pushed
        }
        switch pushed {
        case .proceed, .pause: break
        case .deliver(let reader, let chunk): reader.resume(returning: chunk)
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
            (state.machine.complete(), outcome(of: state, error: error, task: task))
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
        guard let reader = state.withLock({ $0.machine.endBody(result) }) else { return }
        switch result {
        case .success: reader.resume(returning: nil)
        case .failure(let error): reader.resume(throwing: error)
        }
    }

    private func outcome(of state: State, error: (any Error)?, task: URLSessionTask) -> Result<Void, any Error> {
        if let failure = state.failure { return .failure(failure) }
        if state.challenged != nil { return .success(()) }
        guard let error else { return .success(()) }
        let head = task.response as? HTTPURLResponse
        return .failure(
            URLSessionTransport.translate(
                error, for: request.url, cancelledByCaller: state.machine.isCancelled,
                received: state.machine.headArrived ? head.map { ($0, 0) } : nil))
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
/// delegate callbacks of a task from libcurl's callbacks, on the session's work queue, which every session of the
/// process shares: a delegate on this queue must never wait.
///
/// `@unchecked Sendable` only restates `OperationQueue`'s own conformance, as Swift requires of a subclass; the
/// queue adds no state.
final class InlineDelegateQueue: OperationQueue, @unchecked Sendable {
    /// The delegate queue for a session of Courier's: on Linux this one, since FoundationNetworking calls the delegate
    /// from libcurl's callbacks and an `OperationQueue` there costs a thread hop (and an operation with its key-value
    /// observing) per callback; `nil` on Apple platforms, whose URLSession keeps its default serial queue.
    static func whereThePlatformNeedsIt() -> OperationQueue? {
        #if canImport(FoundationNetworking)
            return InlineDelegateQueue()
        #else
            return nil
        #endif
    }

    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        block()
    }

    override func addOperation(_ operation: Operation) {
        operation.start()
    }
}
