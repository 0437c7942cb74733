import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One URLSession task of ``URLSessionTransport``, as its delegate: collects the response as it arrives, stops
/// it past the size limit, answers authentication challenges with the response itself, and decides which
/// redirects the transport follows itself.
///
/// It reports twice, each exactly once. The outcome goes to the caller as soon as it is known: at once when the
/// caller cancels or the body passes the limit, else when the task completes. `finished` runs when URLSession
/// reports the task complete, which is when libcurl has let go of the connection: the transport holds its
/// ``ConnectionGate`` slot until then. The two differ because a cancellation reaches libcurl only through the
/// session's work queue, behind the reads already queued there: against a server streaming at full speed on
/// loopback that took milliseconds in a debug build, up to 1.7 s under ThreadSanitizer, and the caller does not
/// wait for it.
///
/// Callbacks arrive on the session's delegate queue, which on Linux runs them inline on libcurl's callback thread (see
/// `InlineDelegateQueue.whereThePlatformNeedsIt()`), so no callback may wait: each only takes the lock, and whatever would block
/// goes to the session queue. Cancellation arrives from any thread; all state is behind one lock, and the continuation
/// is resumed outside it.
final class URLSessionExchange: NSObject, URLSessionDataDelegate, Sendable {
    /// How a task ended.
    enum Outcome: Sendable {
        /// The final response and its (decoded) body, with its fields as Courier's when they were converted already
        /// (when the head arrived); `nil` when they still have to be.
        case response(HTTPURLResponse, Data, fields: HeaderFields?)
        /// A redirect, with the request that would follow it: the transport's ``RedirectPolicy`` decides whether it
        /// sends that request next or returns the redirect itself.
        case redirect(URLRequest, HTTPURLResponse, Data)
        /// The exchange failed; already translated to what the caller should see.
        case failure(any Error)
    }

    /// Why the exchange stopped the task itself.
    private enum Stop {
        case tooLarge
        case challenged(HTTPURLResponse?)
        case undecodable(String)
    }

    private typealias Machine = URLSessionExchangeStateMachine<CheckedContinuation<Outcome, Never>, URLSessionTask>

    /// Where the caller and the task are (``URLSessionExchangeStateMachine``), and what has arrived so far.
    private struct State {
        var machine = Machine()
        var head: HTTPURLResponse?
        /// ``head``'s fields as Courier's, converted when the head arrived; `nil` when the head came another way.
        var headFields: HeaderFields?
        var body = Data()
        var stop: Stop?
        var redirect: URLRequest?

        /// Marks the body too large (once) and drops it; returns the task to cancel and the caller to tell.
        mutating func stopTooLarge() -> Machine.LeaveAction? {
            guard stop == nil else { return nil }
            stop = .tooLarge
            body = Data()
            return machine.stopEarly()
        }
    }

    private let state = Locked(State())
    /// The request this task sends, as the transport built it (the body URLSession drops on a redirect).
    private let request: URLRequest
    /// The URL of the caller's request: credentials never follow a redirect away from its origin.
    private let origin: URL
    /// The request's credential fields (its ``CredentialPolicy``): what a redirect to another origin strips.
    private let credentialHeaderNames: Set<String>
    private let maxResponseBytes: Int
    /// Runs once, when URLSession reports the task complete.
    private let finished: @Sendable () -> Void
    /// Where the task is created, resumed and cancelled (see ``URLSessionTransport/sessionQueue``).
    private let sessionQueue: DispatchQueue

    init(
        request: URLRequest, origin: URL, credentialHeaderNames: Set<String>, maxResponseBytes: Int,
        sessionQueue: DispatchQueue, finished: @escaping @Sendable () -> Void
    ) {
        self.request = request
        self.origin = origin
        self.credentialHeaderNames = credentialHeaderNames
        self.maxResponseBytes = maxResponseBytes
        self.sessionQueue = sessionQueue
        self.finished = finished
    }

    // MARK: Driving the Task

    /// Takes the caller's continuation; resumes it at once with why the caller left, if it already did.
    ///
    /// - Returns: `false` when the caller already left: the task must not be started.
    func report(to continuation: CheckedContinuation<Outcome, Never>) -> Bool {
        guard let left = state.withLock({ $0.machine.report(to: continuation) }) else { return true }
        continuation.resume(returning: .failure(left))
        return false
    }

    /// Whether the caller left (cancelled, or its deadline passed).
    var hasLeft: Bool { state.withLock { $0.machine.hasLeft } }

    /// Makes the task and starts it, on ``URLSessionTransport/sessionQueue``, unless the caller left first: then
    /// there is no task at all, or one cancelled without ever being resumed, so nothing reaches the network.
    func start(_ makeTask: () -> URLSessionDataTask) {
        guard state.withLock({ $0.machine.start() }) == .makeTask else { return finished() }
        let task = makeTask()
        task.delegate = self
        switch state.withLock({ $0.machine.taskMade(task) }) {
        case .resume(let task): task.resume()
        case .cancel(let task): task.cancel()
        }
    }

    /// The caller left: it gets `CancellationError` now, and the task is cancelled. Runs inside the runtime's
    /// cancellation handler, so it never waits: `cancel()` waits for the session's work queue, which may at that
    /// moment be resuming this very task (see ``URLSessionTransport/exchange(_:origin:credentials:stop:)``).
    func cancelByCaller() {
        leave(with: CancellationError())
    }

    /// The caller leaves with `error` (its cancellation, or ``TransportDeadline/timeoutError``): it is told now, and
    /// the task is cancelled. Never waits, for the same reason as ``cancelByCaller()``.
    func leave(with error: any Error) {
        let action = state.withLock { $0.machine.leave(with: error) }
        action.resume?.resume(returning: .failure(error))
        if let task = action.cancel { sessionQueue.async { task.cancel() } }
    }

    /// Stops the task from a delegate callback, off the delegate queue so that no callback ever waits, and tells
    /// the caller now rather than when the cancellation has made its way through URLSession.
    private func stopTooLarge(_ stopped: Machine.LeaveAction?) {
        guard let stopped else { return }
        stopped.resume?.resume(returning: .failure(APIError.responseTooLarge(limit: maxResponseBytes)))
        if let task = stopped.cancel { sessionQueue.async { task.cancel() } }
    }

    // MARK: Delegate Callbacks

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let head = response as? HTTPURLResponse
        // The fields are converted once, here, and the response is built from them: FoundationNetworking's
        // `value(forHTTPHeaderField:)` lower-cases every name it passes, about 1,600 instructions for one lookup.
        let fields = head.map(URLSessionTransport.headers(of:))
        let encoding = fields?["content-encoding"]
        if let coding = URLSessionTransport.undecodableCoding(inContentEncoding: encoding) {
            // libcurl would fail the body with a message that does not name the coding: stop with one that does.
            let continuation = state.withLock { state in
                if state.stop == nil { state.stop = .undecodable(coding) }
                return state.machine.stopEarly().resume  // the task is cancelled by the completion handler
            }
            continuation?.resume(returning: .failure(URLSessionTransport.undecodableCodingError(coding)))
            return completionHandler(.cancel)
        }
        let announced = head.map { announcedLength($0, contentEncoding: encoding) } ?? -1
        let stopped = state.withLock { state in
            state.head = head
            state.headFields = fields
            return announced > maxResponseBytes ? state.stopTooLarge() : nil
        }
        stopTooLarge(stopped)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let stopped = state.withLock { state -> Machine.LeaveAction? in
            guard state.stop == nil else { return nil }
            guard data.count <= maxResponseBytes - state.body.count else { return state.stopTooLarge() }
            state.body.append(data)
            return nil
        }
        stopTooLarge(stopped)
    }

    /// A `401` with `WWW-Authenticate: Basic`: FoundationNetworking asks for credentials only after the whole
    /// response arrived, and waits forever unless told otherwise (`.performDefaultHandling` with no stored
    /// credential never completes the task). Courier has its own authenticator, so the task is cancelled and the
    /// `401` it already received is the result. Apple's URLSession returns the response itself by default.
    ///
    /// The answer is given from ``URLSessionTransport/sessionQueue``: FoundationNetworking cancels the task inside
    /// the completion handler, waiting for the session's work queue, and the delegate queue runs on the thread pool
    /// that Swift's tasks share.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(FoundationNetworking)
            let failure = challenge.failureResponse as? HTTPURLResponse
            guard failure != nil else { return completionHandler(.performDefaultHandling, nil) }
            state.withLock { state in
                if state.stop == nil { state.stop = .challenged(failure) }
            }
            sessionQueue.async { completionHandler(.cancelAuthenticationChallenge, nil) }
        #else
            completionHandler(.performDefaultHandling, nil)
        #endif
    }

    /// No redirect is followed by URLSession: the task ends with the redirect, and the transport decides with the
    /// request's ``RedirectPolicy`` whether to send the next request, the one URLSession proposes (its method rules,
    /// without credentials when it leaves the origin). URLSession keeps the method of a 307/308 but sends the new
    /// request without its body (FoundationNetworking resets the task's body before every redirect); RFC 9110
    /// §15.4.8 keeps both, so for such a redirect of a request with a body the next request is this one, moved.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let next =
            bodyPreservingRedirect(response, to: newRequest)
            ?? RedirectGuard.redirect(newRequest, from: origin, credentialHeaderNames: credentialHeaderNames)
        state.withLock { state in
            state.redirect = next
            if state.head == nil { state.head = response }
        }
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        complete(error) { task.response as? HTTPURLResponse }
    }

    /// The completion handler of a task of a session the transport did not make: URLSession buffered the body.
    func completed(data: Data?, response: URLResponse?, error: (any Error)?) {
        if let response, error == nil {
            let head = response as? HTTPURLResponse
            let tooLarge = (data?.count ?? 0) > maxResponseBytes
            state.withLock { state in
                state.head = head
                state.headFields = nil
                if tooLarge, state.stop == nil { state.stop = .tooLarge }
                if !tooLarge { state.body = data ?? Data() }
            }
        }
        complete(error) { response as? HTTPURLResponse }
    }

    // MARK: Completing

    /// Ends the exchange with what URLSession reported.
    ///
    /// - Parameter fallbackHead: The response as URLSession kept it, for a task whose head the exchange did not see.
    ///   Read only then: `URLSessionTask.response` takes the task's own lock queue in FoundationNetworking.
    private func complete(_ error: (any Error)?, fallbackHead: () -> HTTPURLResponse?) {
        let (continuation, outcome) = state.withLock { state -> (CheckedContinuation<Outcome, Never>?, Outcome?) in
            defer { state.body = Data() }
            // The machine lets go of the task, which holds this delegate: that breaks the cycle.
            guard let continuation = state.machine.complete() else { return (nil, nil) }
            return (continuation, self.outcome(of: state, error: error, fallbackHead: fallbackHead))
        }
        finished()  // first: a redirect followed next may need this very slot
        if let continuation, let outcome { continuation.resume(returning: outcome) }
    }

    private func outcome(of state: State, error: (any Error)?, fallbackHead: () -> HTTPURLResponse?) -> Outcome {
        switch state.stop {
        case .tooLarge?:
            return .failure(APIError.responseTooLarge(limit: maxResponseBytes))
        case .undecodable(let coding)?:
            return .failure(URLSessionTransport.undecodableCodingError(coding))
        case .challenged(let failure)?:
            guard let head = state.head ?? failure else { break }
            return .response(head, state.body, fields: state.head != nil ? state.headFields : nil)
        case nil:
            break
        }
        if let error {
            let received = state.head.map { (head: $0, bytes: state.body.count) }
            return .failure(
                URLSessionTransport.translate(
                    error, for: request.url, cancelledByCaller: state.machine.isCancelledByCaller, received: received))
        }
        if let redirect = state.redirect, let head = state.head ?? fallbackHead() {
            return .redirect(redirect, head, state.body)
        }
        guard let head = state.head ?? fallbackHead() else {
            return .failure(APIError.transport(.badServerResponse, underlying: URLError(.badServerResponse)))
        }
        return .response(head, state.body, fields: state.head != nil ? state.headFields : nil)
    }

    // MARK: Rules

    /// The `Content-Length` of a response that will have a body (not a `HEAD`, 1xx, 204 or 304), in the bytes the
    /// caller will get: unknown (-1) when a `Content-Encoding` is applied, since the limit is on decoded bytes.
    private func announcedLength(_ head: HTTPURLResponse, contentEncoding: String?) -> Int64 {
        let status = head.statusCode
        guard request.httpMethod != "HEAD", status >= 200, status != 204, status != 304 else { return -1 }
        guard (contentEncoding ?? "identity").lowercased() == "identity" else { return -1 }
        return head.expectedContentLength
    }

    /// The request to send after a 307 or 308 of a request with a body: the same method, headers and body at the
    /// new location (an http(s) URL), without credentials if that leaves the origin; nil for any other redirect.
    private func bodyPreservingRedirect(_ response: HTTPURLResponse, to proposed: URLRequest) -> URLRequest? {
        guard response.statusCode == 307 || response.statusCode == 308, request.httpBody?.isEmpty == false,
            let target = proposed.url, ["http", "https"].contains(target.scheme?.lowercased() ?? "")
        else { return nil }
        var next = request
        next.url = target
        return RedirectGuard.redirect(next, from: origin, credentialHeaderNames: credentialHeaderNames)
    }
}
