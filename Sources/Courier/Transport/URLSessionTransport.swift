import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The default ``HTTPTransport``: sends requests with `URLSession`, configured for a service.
///
/// The session it makes for itself keeps no state between calls that Courier does not control:
/// no `URLCache` (``APIClient`` has its own cache, and URLSession on Linux neither caches nor
/// revalidates), no cookie storage, and no credential storage. Deadlines are enforced by
/// ``APIClient`` on its own clock, because URLSession truncates timeouts to whole seconds on Linux;
/// the session's own timeouts are only a generous backstop.
///
/// What it guards against, beyond URLSession's defaults:
/// - **Cancelled requests stay unsent.** At most `httpMaximumConnectionsPerHost` requests per host are inside
///   URLSession at once; the rest wait in the transport, in order, and a caller who leaves while waiting is
///   dropped before URLSession sees its request. (URLSession queues the excess itself and, when many callers
///   leave together, sends queued requests whose cancellation it has not processed yet.) A request already inside
///   URLSession when its caller leaves is cancelled there; it can still reach the wire only if it was being sent
///   at that moment.
/// - **Response size.** A body larger than ``maxResponseBytes`` after decoding (URLSession asks for and inflates
///   gzip, deflate, brotli and zstd by itself) fails with ``APIError/responseTooLarge(limit:)``, as the bytes
///   arrive or as soon as `Content-Length` announces it. With a session the transport made, what is kept stays
///   near the limit, so a compressed bomb never fills memory (libcurl may still inflate what already arrived
///   before the cancellation lands, and the transport discards it).
/// - **`401` with `WWW-Authenticate`** is returned as the response, for ``APIClient``'s authenticator to handle;
///   URLSession on Linux would otherwise wait for credentials until the deadline.
/// - **Redirects.** Followed by URLSession, except a 307 or 308 of a request with a body, which the transport
///   follows itself so that method and body are kept (RFC 9110 §15.4.8); URLSession drops the body. A redirect to
///   another origin (scheme, host or port) drops `Authorization`, `Proxy-Authorization` and `Cookie`, so a
///   credential meant for one server is never sent to another.
///
/// Cancelling the calling task cancels the URLSession task at once and throws `CancellationError`.
/// `URLError`s become ``APIError/transport(_:underlying:)`` with the `URLError` kept as the cause; a task that
/// URLSession cancelled for another reason (an invalidated session) is a transport failure, not a cancellation.
public final class URLSessionTransport: HTTPTransport {
    /// The session requests are sent with.
    ///
    /// - Important: Do not invalidate it while the transport is in use: calls in flight then fail with
    ///   ``APIError/transport(_:underlying:)``, and FoundationNetworking traps when a task is created on an
    ///   invalidated session. The transport invalidates a session it made when it is released.
    public let session: URLSession
    /// The largest response body, in bytes after decoding, that the transport accepts.
    public let maxResponseBytes: Int
    /// The default of ``maxResponseBytes``: 64 MiB, far above any API response and far below a bomb.
    public static let defaultMaxResponseBytes = 64 << 20
    /// The most redirects the default ``RedirectPolicy`` follows for one request.
    static let maxRedirects = RedirectPolicy.default.limit
    /// Whether the transport made `session`, and so invalidates it when it goes away.
    private let ownsSession: Bool
    /// Keeps requests that URLSession would only queue in Courier, where cancelling them is synchronous.
    let gate: ConnectionGate
    /// Where the transport calls URLSession's blocking methods: creating, resuming and cancelling tasks, and
    /// invalidating the session. In FoundationNetworking each of them waits for the session's work queue, and while
    /// a server streams faster than the client reads, libcurl's reads keep that queue busy (up to 1.7 s in one
    /// test under ThreadSanitizer, over a minute with the whole suite running). Called from a task, that wait held
    /// one of Swift's few threads (two on a 2-core machine), and two such waits stopped every task in the process;
    /// on `DispatchQueue.global()` they took the same pool, and every session's delegate callbacks stopped with
    /// them. A serial queue of its own targets the overcommitting pool: a wait there holds one thread of its own,
    /// and keeps the order of start and cancel.
    let sessionQueue = DispatchQueue(label: "Courier.URLSessionTransport.session")

    /// Creates a transport with its own session, made from ``defaultConfiguration``.
    ///
    /// - Parameter maxResponseBytes: The largest response body accepted, in bytes after decoding.
    ///   ``defaultMaxResponseBytes`` (64 MiB) by default.
    public convenience init(maxResponseBytes: Int = defaultMaxResponseBytes) {
        self.init(configuration: Self.defaultConfiguration, maxResponseBytes: maxResponseBytes)
    }

    /// Creates a transport with its own session, made from `configuration`. The session is invalidated when the
    /// transport is released.
    ///
    /// - Parameters:
    ///   - configuration: The session's configuration; start from ``defaultConfiguration``. Its
    ///     `httpMaximumConnectionsPerHost` is also how many requests per host the transport lets into URLSession
    ///     at once; on Linux, more than 4 makes libcurl close idle connections whenever the load dips.
    ///   - maxResponseBytes: The largest response body accepted, in bytes after decoding. Enforced as the body
    ///     arrives. ``defaultMaxResponseBytes`` (64 MiB) by default; negative values count as 0.
    public init(configuration: URLSessionConfiguration, maxResponseBytes: Int = defaultMaxResponseBytes) {
        self.session = URLSession(
            configuration: configuration, delegate: URLSessionRouter(),
            // Inline on Linux: its callbacks only take a lock and never wait; stopping a task and answering a
            // challenge with a cancellation go to `sessionQueue`. About 5 % of the client's CPU against nginx.
            delegateQueue: InlineDelegateQueue.whereThePlatformNeedsIt())
        self.ownsSession = true
        self.maxResponseBytes = max(0, maxResponseBytes)
        self.gate = ConnectionGate(limit: configuration.httpMaximumConnectionsPerHost)
    }

    /// Creates a transport that sends with a session you configured.
    ///
    /// - Parameters:
    ///   - session: The session to use. For server-side use, give it no `URLCache` and no cookie storage, as
    ///     ``defaultConfiguration`` does. Give it to one transport only, and create no tasks of your own on it:
    ///     the transport counts the connections it uses.
    ///   - maxResponseBytes: The largest response body accepted, in bytes after decoding.
    /// - Important: URLSession delivers the body of a task to the session's delegate only, so with a session the
    ///   transport did not make it gets the body at the end, buffered by URLSession: the size limit then fails the
    ///   call but does not bound memory, and a `401` answered with a `WWW-Authenticate` challenge is returned
    ///   without its body. Redirects and the rest are handled as with the transport's own session (redirects and
    ///   challenges reach a task's own delegate). Prefer ``init(configuration:maxResponseBytes:)``.
    public init(session: URLSession, maxResponseBytes: Int = defaultMaxResponseBytes) {
        self.session = session
        self.ownsSession = false
        self.maxResponseBytes = max(0, maxResponseBytes)
        self.gate = ConnectionGate(limit: session.configuration.httpMaximumConnectionsPerHost)
    }

    deinit {
        guard ownsSession else { return }
        let session = session
        sessionQueue.async { session.finishTasksAndInvalidate() }
    }

    /// An ephemeral configuration with no URL cache, no cookies, no credential storage, and
    /// five-minute backstop timeouts; on Linux, at most 4 connections per host (as many as libcurl keeps with one
    /// transfer in flight: with more, it closes and reopens connections whenever the load dips).
    public static var defaultConfiguration: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCredentialStorage = nil
        configuration.timeoutIntervalForRequest = 300
        configuration.timeoutIntervalForResource = 3600
        #if canImport(FoundationNetworking)
            configuration.httpMaximumConnectionsPerHost = linuxConnectionsPerHost
        #endif
        return configuration
    }

    /// The connections per host of ``defaultConfiguration`` on Linux: 4, as many connections as libcurl keeps with
    /// one transfer in flight.
    ///
    /// libcurl's connection cache keeps at most four connections per transfer added to the session
    /// (`CURLMOPT_MAXCONNECTS`, which FoundationNetworking leaves at its default), and the transport lets no more transfers per host into URLSession
    /// than it has connections (see `ConnectionGate`). So with more connections than that, each time the load dips
    /// (one transfer in flight while the others' successors are still on their way in), libcurl closes an idle
    /// connection, and the next burst connects again. Under a starved CPU that became a storm: each new connection's
    /// socket stays watched for writing after the connect (FoundationNetworking never cancels a write source libcurl
    /// stopped asking for), and that source fires on the queue every session shares until the connection's first
    /// transfer ends (issue 30: 427,000 calls into libcurl for 700 requests under callgrind, and timeouts). With
    /// 4 a dip never closes a connection. A configuration of your own with more connections per host gets them, and
    /// the reconnections with them.
    static let linuxConnectionsPerHost = 4

    /// Sends `request` with the session and returns the response.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The response, whatever its status code.
    /// - Throws: ``APIError/transport(_:underlying:)`` when the exchange failed,
    ///   ``APIError/responseTooLarge(limit:)`` past ``maxResponseBytes``, `CancellationError` when the calling
    ///   task was cancelled.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        try await send(request, stop: nil)
    }

    /// Sends `request` and stops it when `deadline` passes, without a task of its own: the wait for a connection
    /// slot and the URLSession task are stopped from the deadline's handler.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - deadline: When the attempt must end.
    /// - Returns: The response, whatever its status code.
    /// - Throws: ``TransportDeadline/timeoutError`` past the deadline, and what ``send(_:)`` throws.
    public func send(_ request: TransportRequest, deadline: TransportDeadline) async throws -> TransportResponse {
        let stop = AttemptStop()
        let registration = deadline.onExpiry { stop.fire(deadline.timeoutError) }
        defer { registration.cancel() }
        return try await send(request, stop: stop)
    }

    private func send(_ request: TransportRequest, stop: AttemptStop?) async throws -> TransportResponse {
        var next = Self.urlRequest(for: request)
        var chain = RedirectChain(policy: request.redirectPolicy, first: next.url, method: request.method.rawValue)
        while true {
            switch await exchange(next, origin: request.url, credentials: request.credentials, stop: stop) {
            case .response(let head, let body, let fields):
                let response = TransportResponse(
                    statusCode: head.statusCode, headers: fields ?? Self.headers(of: head), body: body, url: next.url)
                try chain.checkUnfollowable(response, from: next.url)
                return response
            case .redirect(let redirected, let head, let body):
                guard let from = next.url, let to = redirected.url,
                    try chain.follow(
                        status: head.statusCode, from: from, to: to,
                        location: head.value(forHTTPHeaderField: "Location"), method: redirected.httpMethod ?? "GET")
                else {
                    return TransportResponse(
                        statusCode: head.statusCode, headers: Self.headers(of: head), body: body, url: next.url)
                }
                next = redirected
            case .failure(let error):
                throw error
            }
        }
    }

    // MARK: Loading

    /// One URLSession task, sent once a ``ConnectionGate`` slot for its host is free, and how it ended, as soon as
    /// that is known (see ``URLSessionExchange``). The slot is held until URLSession reports the task complete, which
    /// may be later.
    ///
    /// The caller waits once, for the outcome. A request that has to queue for a slot is started by whoever frees
    /// the slot, so its caller's task is not woken just to start it (a thread hop per request at 100 concurrent
    /// requests to one host, where most queue).
    ///
    /// Not `URLSession.data(for:)`: in swift-corelibs-foundation its cancellation handler calls
    /// `URLSessionTask.cancel()`, which waits on the session's queue while the runtime holds the cancelled task's
    /// status lock, and the session's queue may at that moment be resuming the same task, which needs that lock.
    /// Seen here as a deadlock of the whole session under ThreadSanitizer, where a deadline or a cancelled caller
    /// raced a response that was just arriving. The handler here only flags the task and cancels it from another
    /// queue, so it never waits while the lock is held.
    func exchange(
        _ request: URLRequest, origin: URL, credentials: CredentialPolicy = .standard, stop: AttemptStop? = nil
    ) async -> URLSessionExchange.Outcome {
        let host = ConnectionGate.key(for: request.url)
        let id = gate.makeID()
        let exchange = URLSessionExchange(
            request: request, origin: origin, credentialHeaderNames: credentials.headerNames,
            maxResponseBytes: maxResponseBytes, sessionQueue: sessionQueue
        ) { [gate] in gate.leave(host) }
        let leave: @Sendable (any Error) -> Void = { [gate] error in
            exchange.leave(with: error)
            gate.withdraw(host, id: id)
        }
        if let reason = stop?.watch(leave) { leave(reason) }
        defer { stop?.unwatch() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // A caller that already left is told at once and takes no slot.
                guard exchange.report(to: continuation) else { return }
                let start: @Sendable () -> Void = { [session, ownsSession, sessionQueue] in
                    sessionQueue.async {
                        exchange.start {
                            guard !ownsSession else { return session.dataTask(with: request) }
                            return session.dataTask(with: request) { data, response, error in
                                exchange.completed(data: data, response: response, error: error)
                            }
                        }
                    }
                }
                if gate.admit(host, id: id, start: start) {
                    start()
                } else if exchange.hasLeft {
                    // It left between the report and the queueing, and its withdrawal found nothing yet.
                    gate.withdraw(host, id: id)
                }
            }
        } onCancel: {
            leave(CancellationError())
        }
    }

    // MARK: Translating

    static func urlRequest(for request: TransportRequest) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        // A new URLRequest's method is already GET, and FoundationNetworking's setter normalizes the method it is given
        // (about 4,000 instructions a request): set only another method.
        if request.method != .get { urlRequest.httpMethod = request.method.rawValue }
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        urlRequest.httpShouldHandleCookies = false
        for field in request.headers {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
        }
        urlRequest.httpBody = request.body
        return urlRequest
    }

    static func headers(of response: HTTPURLResponse) -> HeaderFields {
        // Casting each element on its own (`base as? String`, `as? String`), not the pair as a tuple pattern: the
        // pattern went through the runtime's generic tuple cast, twice a field.
        let all = response.allHeaderFields
        var fields: [HeaderFields.Field] = []
        fields.reserveCapacity(all.count)
        for (name, value) in all {
            guard let name = name.base as? String, let value = value as? String else { continue }
            fields.append(HeaderFields.Field(name: name, value: value))
        }
        return HeaderFields(fields: fields)
    }
}

/// Drops credentials from a redirected request whose origin differs from the original request's, so a
/// token for one server never reaches another (RFC 9110 §15.4 leaves this to the client).
final class RedirectGuard: NSObject, URLSessionTaskDelegate, Sendable {
    /// A delegate for tasks of sessions the transport did not make.
    static let shared = RedirectGuard()

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let from = task.originalRequest?.url ?? response.url
        completionHandler(Self.redirect(request, from: from))
    }

    /// `request` as it may be sent after a redirect from `origin`: unchanged within the same origin,
    /// without credential fields across origins: every field the request's ``CredentialPolicy`` names.
    static func redirect(
        _ request: URLRequest, from origin: URL?,
        credentialHeaderNames: Set<String> = CredentialPolicy.standard.headerNames
    ) -> URLRequest {
        guard let target = request.url, let origin, Origin.same(origin, target) else {
            var stripped = request
            for field in credentialHeaderNames { stripped.setValue(nil, forHTTPHeaderField: field) }
            return stripped
        }
        return request
    }
}
