#if AsyncHTTPClient
    import AsyncHTTPClient
    import Courier
    import Foundation
    import NIOCore
    import Synchronization

    /// An ``HTTPTransport`` on AsyncHTTPClient: SwiftNIO's connection pool, HTTP/2 over TLS, and bodies streamed both
    /// ways, for services on Linux.
    ///
    /// A service switches to it with one line of its client's configuration:
    ///
    /// ```swift
    /// let configuration = APIClient.Configuration(transport: AsyncHTTPClientTransport())
    /// ```
    ///
    /// What it keeps from ``URLSessionTransport``, so that switching changes nothing a caller can see:
    /// - **Deadlines are Courier's.** AsyncHTTPClient's read and write timeouts are off and each request's own
    ///   deadline is distant: when an attempt's deadline passes on the client's clock, the transport fails
    ///   AsyncHTTPClient's task for it, which stops the transfer (AsyncHTTPClient closes the connection); see
    ///   ``send(_:deadline:)``. Connecting has a five-minute backstop only, because AsyncHTTPClient cannot be told to
    ///   connect without one. (AsyncHTTPClient's own deadline is not used: in 1.37 it ends only the wait for the
    ///   response head, and a body that stalls after it was measured to hang past it.)
    /// - **Redirects** are followed by the transport, not by AsyncHTTPClient, so that a redirect to another origin
    ///   drops every field the request's ``TransportRequest/credentials`` names (AsyncHTTPClient would drop only
    ///   `Authorization`, `Cookie` and `Proxy-Authorization`). 303, and 301 or 302 of a `POST`, become a `GET` without
    ///   a body; 307 and 308 keep the method and the body.
    /// - **Response size.** ``send(_:)`` fails with ``APIError/responseTooLarge(limit:)`` once a body passes
    ///   ``maxResponseBytes``, as soon as `Content-Length` announces it or as the bytes arrive, and stops reading.
    /// - **Errors** become ``APIError/transport(_:underlying:)`` with AsyncHTTPClient's or SwiftNIO's error as the
    ///   cause, and a cancelled caller gets `CancellationError`.
    ///
    /// What differs: bodies are never decoded. A response with `Content-Encoding: gzip`, or with a coding nobody knows,
    /// arrives as the server sent it, with its `Content-Encoding` header, and ``maxResponseBytes`` counts those bytes.
    /// Ask for a coding with `Accept-Encoding` only if you decode it yourself.
    ///
    /// ## Event loops
    ///
    /// A buffered exchange (``send(_:deadline:)``) that is the transport's only one in flight runs on one event loop of
    /// the group, the transport's own, from start to end: one caller sending one request after another keeps its
    /// connection, the response's events and its own wake-up on one thread. Exchanges that overlap are spread over
    /// the group's loops by AsyncHTTPClient, as usual, and so are the connections a burst of them opens: the home
    /// loop gets its share, where the exchanges alone that follow find them.
    ///
    /// ## Sharing and shutting down
    ///
    /// One transport holds one `HTTPClient`, and with it one connection pool: make one per service and share it
    /// between clients. A transport made with ``init(configuration:eventLoopGroup:maxResponseBytes:)`` owns its
    /// client: call ``shutdown()`` when the service stops, to close the connections and wait for them. If you don't,
    /// the client is shut down in the background when the transport is released, which happens only once no call and
    /// no streamed body uses it. A client you pass to ``init(client:maxResponseBytes:)`` stays yours to shut down.
    public final class AsyncHTTPClientTransport: HTTPTransport {
        /// The client requests are sent with.
        public let client: HTTPClient
        /// The largest response body, in bytes as received, that ``send(_:)`` accepts.
        ///
        /// ``stream(_:)`` hands the body to the reader without a limit: the reader decides how much it keeps (a
        /// download to a file may be far larger than any API response).
        public let maxResponseBytes: Int
        /// The most redirects followed for one request, as URLSession and browsers.
        public static let maxRedirects = 20

        /// Whether the transport made ``client`` and so shuts it down.
        private let ownsClient: Bool
        /// Whether ``shutdown()`` ran, so that the transport does not shut the client down a second time.
        private let isShutDown = Mutex(false)
        /// Which event loop a buffered exchange runs on (``send(_:deadline:)``).
        let affinity: EventLoopAffinity

        /// Creates a transport with a client of its own.
        ///
        /// - Parameters:
        ///   - configuration: The client's configuration; start from ``defaultConfiguration``, which this
        ///     transport relies on for redirects, decompression and timeouts (set TLS, the pool size, a proxy).
        ///   - eventLoopGroup: The SwiftNIO threads the client runs on; AsyncHTTPClient's shared group by default.
        ///   - maxResponseBytes: The largest response body ``send(_:)`` accepts, in bytes.
        ///     ``URLSessionTransport/defaultMaxResponseBytes`` (64 MiB) by default; negative values count as 0.
        public init(
            configuration: HTTPClient.Configuration = defaultConfiguration,
            eventLoopGroup: any EventLoopGroup = HTTPClient.defaultEventLoopGroup,
            maxResponseBytes: Int = URLSessionTransport.defaultMaxResponseBytes
        ) {
            self.client = HTTPClient(
                eventLoopGroup: eventLoopGroup, configuration: Self.withoutNoOpTracing(configuration))
            self.affinity = EventLoopAffinity(eventLoopGroup)
            self.ownsClient = true
            self.maxResponseBytes = max(0, maxResponseBytes)
        }

        /// Creates a transport that sends with a client you configured and shut down yourself.
        ///
        /// - Parameters:
        ///   - client: The client. Make it from ``defaultConfiguration``.
        ///   - maxResponseBytes: The largest response body ``send(_:)`` accepts, in bytes.
        /// - Important: The client must not follow redirects (`redirectConfiguration = .disallow`) nor decompress
        ///   (`decompression = .disabled`), as in ``defaultConfiguration``. A client that follows redirects itself
        ///   sends credentials named only in the request's ``CredentialPolicy`` (say `X-API-Key`) to another origin.
        public init(client: HTTPClient, maxResponseBytes: Int = URLSessionTransport.defaultMaxResponseBytes) {
            self.client = client
            self.affinity = EventLoopAffinity(client.eventLoopGroup)
            self.ownsClient = false
            self.maxResponseBytes = max(0, maxResponseBytes)
        }

        deinit {
            guard ownsClient, !isShutDown.withLock({ $0 }) else { return }
            client.shutdown { _ in }
        }

        /// AsyncHTTPClient's defaults with what the transport needs: no redirects followed by the client, no
        /// decompression, no read or write timeout, a five-minute connect backstop, and failing at once when a
        /// connection cannot be made (rather than retrying it until the connect timeout). Without a tracer when the
        /// process has none bootstrapped: a span that records nothing cost about 9,000 instructions a request.
        ///
        /// HTTP/2 is negotiated over TLS (ALPN), HTTP/1.1 is used otherwise.
        public static var defaultConfiguration: HTTPClient.Configuration {
            var configuration = HTTPClient.Configuration()
            configuration.redirectConfiguration = .disallow
            configuration.decompression = .disabled
            configuration.timeout = .init(connect: .minutes(5), read: nil)
            configuration.httpVersion = .automatic
            configuration.connectionPool.retryConnectionEstablishment = false
            return withoutNoOpTracing(configuration)
        }

        /// Closes the client's connections and waits for them, if the transport made the client; does nothing for a
        /// client you passed in. Calls still in flight fail.
        ///
        /// - Throws: AsyncHTTPClient's error when the client could not shut down cleanly.
        public func shutdown() async throws {
            guard ownsClient,
                !isShutDown.withLock({ isShutDown in
                    defer { isShutDown = true }; return isShutDown
                })
            else { return }
            try await client.shutdown()
        }

        // MARK: Sending

        /// Sends `request` and returns the response with its whole body.
        ///
        /// - Parameter request: The request to send.
        /// - Returns: The response, whatever its status code.
        /// - Throws: ``APIError/transport(_:underlying:)`` when the exchange failed,
        ///   ``APIError/responseTooLarge(limit:)`` past ``maxResponseBytes``, `CancellationError` when the calling
        ///   task was cancelled.
        public func send(_ request: TransportRequest) async throws -> TransportResponse {
            let (response, head) = try await execute(request)
            if let length = head.announcedLength, length > maxResponseBytes {
                throw APIError.responseTooLarge(limit: maxResponseBytes)
            }
            var body = ResponseBodyChunks(body: response.body, origin: request.url, owner: self).makeAsyncIterator()
            var data = Data()
            while let chunk = try await body.next() {
                guard chunk.count <= maxResponseBytes - data.count else {
                    throw APIError.responseTooLarge(limit: maxResponseBytes)
                }
                if data.isEmpty { data = chunk } else { data.append(chunk) }
            }
            return TransportResponse(statusCode: head.statusCode, headers: head.headers, body: data)
        }

        /// Sends `request` and returns once the response's head has arrived; the body is read from the connection as
        /// the reader asks for it, so a slow reader slows the server down.
        ///
        /// Letting the body go unread (or cancelling the reading task) closes the connection and stops the transfer.
        ///
        /// - Parameter request: The request to send; its ``TransportRequest/streamedBody`` is sent as it is produced.
        /// - Returns: The status and header fields, with the body still arriving.
        /// - Throws: ``APIError/transport(_:underlying:)`` when the exchange failed, `CancellationError` when the
        ///   calling task was cancelled.
        public func stream(_ request: TransportRequest) async throws -> StreamedTransportResponse {
            let (response, head) = try await execute(request)
            let chunks = ResponseBodyChunks(body: response.body, origin: request.url, owner: self)
            return StreamedTransportResponse(
                statusCode: head.statusCode, headers: head.headers, body: ByteStream(chunks))
        }

        /// Sends the request and follows redirects until a response that is not one arrives.
        private func execute(_ request: TransportRequest) async throws -> (HTTPClientResponse, ResponseHead) {
            var hop = RedirectHop(request)
            for _ in 0...Self.maxRedirects {
                let response = try await executeOnce(hop, origin: request.url)
                let head = ResponseHead(response, method: hop.method)
                guard let next = hop.following(status: head.statusCode, headers: head.fields) else {
                    return (response, head)
                }
                await Self.discard(response.body)
                hop = next
            }
            throw APIError.transport(.other, underlying: HTTPClientError.redirectLimitReached)
        }

        /// One request to AsyncHTTPClient, with no deadline of its own: the caller's task carries Courier's.
        private func executeOnce(_ hop: RedirectHop, origin: URL) async throws -> HTTPClientResponse {
            let outgoing = try hop.clientRequest()
            do {
                return try await client.execute(outgoing, deadline: .distantFuture)
            } catch {
                throw Self.translate(error, for: origin)
            }
        }

        /// Reads what a redirect's body holds, up to a few kilobytes, so that its connection can serve the next
        /// request; a longer body is dropped, which closes that connection instead.
        private static func discard(_ body: HTTPClientResponse.Body) async {
            var remaining = 64 << 10
            var iterator = body.makeAsyncIterator()
            while remaining > 0, let chunk = try? await iterator.next() { remaining -= chunk.readableBytes }
        }
    }
#endif
