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
/// Redirects are followed by URLSession, but a redirect to another origin (scheme, host or port) drops
/// `Authorization`, `Proxy-Authorization` and `Cookie`, so a credential meant for one server is never
/// sent to another.
///
/// Cancelling the calling task cancels the URLSession task at once and throws `CancellationError`.
/// `URLError`s become ``APIError/transport(_:underlying:)`` with the `URLError` kept as the cause.
public final class URLSessionTransport: HTTPTransport {
    /// The session requests are sent with.
    public let session: URLSession
    /// Whether the transport made `session`, and so invalidates it when it goes away.
    private let ownsSession: Bool

    /// Creates a transport with its own session, made from ``defaultConfiguration``.
    public convenience init() {
        self.init(configuration: Self.defaultConfiguration)
    }

    /// Creates a transport with its own session, made from `configuration`, whose delegate drops
    /// credentials on cross-origin redirects. The session is invalidated when the transport is released.
    ///
    /// - Parameter configuration: The session's configuration; start from ``defaultConfiguration``.
    public init(configuration: URLSessionConfiguration) {
        self.session = URLSession(configuration: configuration, delegate: RedirectGuard(), delegateQueue: nil)
        self.ownsSession = true
    }

    /// Creates a transport that sends with a session you configured.
    ///
    /// - Parameter session: The session to use. For server-side use, give it no `URLCache` and no
    ///   cookie storage, as ``defaultConfiguration`` does.
    /// - Important: Credentials are dropped on cross-origin redirects only where URLSession delivers
    ///   redirects to a task's delegate (Apple platforms), or when `session`'s own delegate does it.
    ///   Prefer ``init(configuration:)``, whose session always does.
    public init(session: URLSession) {
        self.session = session
        self.ownsSession = false
    }

    deinit {
        if ownsSession { session.finishTasksAndInvalidate() }
    }

    /// An ephemeral configuration with no URL cache, no cookies, no credential storage, and
    /// five-minute backstop timeouts.
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
        return configuration
    }

    /// Sends `request` with the session and returns the response.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The response, whatever its status code.
    /// - Throws: ``APIError/transport(_:underlying:)`` when the exchange failed, `CancellationError`
    ///   when the calling task was cancelled.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let urlRequest = Self.urlRequest(for: request)
        let data: Data
        let urlResponse: URLResponse
        do {
            (data, urlResponse) = try await load(urlRequest, credentials: request.credentials)
        } catch {
            throw Self.translate(error, for: request.url)
        }
        guard let http = urlResponse as? HTTPURLResponse else {
            throw APIError.transport(.badServerResponse, underlying: URLError(.badServerResponse))
        }
        return HTTPResponse(statusCode: http.statusCode, headers: Self.headers(of: http), body: data)
    }

    // MARK: Loading

    /// One data task, cancelled when the calling task is.
    ///
    /// Not `URLSession.data(for:)`: in swift-corelibs-foundation its cancellation handler calls
    /// `URLSessionTask.cancel()`, which waits on the session's queue while the runtime holds the cancelled task's
    /// status lock, and the session's queue may at that moment be resuming the same task, which needs that lock.
    /// Seen here as a deadlock of the whole session under ThreadSanitizer, where a deadline or a cancelled caller
    /// raced a response that was just arriving. The handler here only flags the task and cancels it from another
    /// queue, so it never waits while the lock is held.
    func load(_ request: URLRequest, credentials: CredentialPolicy = .standard) async throws -> (Data, URLResponse) {
        let cancellation = Locked(PendingTask())
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                task.delegate = RedirectGuard(credentialHeaderNames: credentials.headerNames)
                let cancelled = cancellation.withLock { pending in
                    pending.task = task
                    return pending.isCancelled
                }
                task.resume()
                if cancelled { task.cancel() }
            }
        } onCancel: {
            let task = cancellation.withLock { pending in
                pending.isCancelled = true
                return pending.task
            }
            if let task { DispatchQueue.global().async { task.cancel() } }
        }
    }

    // MARK: Translating

    static func urlRequest(for request: HTTPRequest) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        urlRequest.httpShouldHandleCookies = false
        for field in request.headers {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
        }
        urlRequest.httpBody = request.body
        return urlRequest
    }

    static func headers(of response: HTTPURLResponse) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for case let (name as String, value as String) in response.allHeaderFields {
            headers.add(name: name, value: value)
        }
        return headers
    }

    /// Maps URLSession's errors onto Courier's, keeping the original as the cause.
    ///
    /// On Linux, URLSession reports a reply that is not HTTP/1.x (a garbage status line, `HTTP/9.9`, an
    /// HTTP/0.9-style body) as `unsupportedURL`; for an http(s) URL that can only be the server's fault, so it
    /// is a ``TransportFailure/badServerResponse``.
    static func translate(_ error: any Error, for url: URL? = nil) -> any Error {
        if error is CancellationError { return error }
        guard let urlError = error as? URLError else {
            return APIError.transport(.other, underlying: error)
        }
        if urlError.code == .cancelled {
            // URLSession reports task cancellation as a URLError; callers expect CancellationError.
            return CancellationError()
        }
        if urlError.code == .unsupportedURL, let scheme = url?.scheme?.lowercased(),
            scheme == "http" || scheme == "https"
        {
            return APIError.transport(.badServerResponse, underlying: urlError)
        }
        return APIError.transport(failure(for: urlError.code), underlying: urlError)
    }

    static func failure(for code: URLError.Code) -> TransportFailure {
        switch code {
        case .timedOut: .timedOut
        case .cannotConnectToHost: .cannotConnect
        case .networkConnectionLost: .connectionLost
        case .cannotFindHost, .dnsLookupFailed: .dnsFailure
        case .notConnectedToInternet, .internationalRoamingOff, .dataNotAllowed: .notConnected
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected,
            .clientCertificateRequired:
            .secureConnectionFailed
        case .badServerResponse, .cannotParseResponse, .cannotDecodeRawData, .cannotDecodeContentData:
            .badServerResponse
        default: .other
        }
    }
}

/// Drops credentials from a redirected request whose origin differs from the original request's, so a
/// token for one server never reaches another (RFC 9110 §15.4 leaves this to the client).
/// The data task of one `send`, and whether its caller was cancelled before the task existed.
private struct PendingTask {
    var task: URLSessionDataTask?
    var isCancelled = false
}

final class RedirectGuard: NSObject, URLSessionTaskDelegate, Sendable {
    /// The header fields this guard strips on a redirect to another origin: the request's credential fields.
    let credentialHeaderNames: Set<String>

    /// Creates a guard that strips `credentialHeaderNames` on a cross-origin redirect.
    init(credentialHeaderNames: Set<String> = CredentialPolicy.standard.headerNames) {
        self.credentialHeaderNames = credentialHeaderNames
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let from = task.originalRequest?.url ?? response.url
        completionHandler(Self.redirect(request, from: from, credentialHeaderNames: credentialHeaderNames))
    }

    /// `request` as it may be sent after a redirect from `origin`: unchanged within the same origin,
    /// without credential fields across origins.
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
