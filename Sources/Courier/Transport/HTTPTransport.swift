/// The seam between Courier and the network: sends one request and returns the response, whole or streamed.
///
/// ``APIClient`` calls a transport once per attempt, after building the request, running adapters and
/// authorizing it. Retries, deadlines, coalescing and caching all happen above this seam, so a transport
/// only moves bytes. ``URLSessionTransport`` is the default; tests and other stacks plug in their own.
///
/// A transport must be safe to call from many tasks at once, and should stop promptly when the calling
/// task is cancelled (throwing `CancellationError`).
///
/// ## Buffered and streamed
///
/// ``send(_:)`` moves whole bodies and is all a test or fixture transport needs: ``stream(_:)`` has a default
/// built on it. A transport that can stream (``URLSessionTransport``, the AsyncHTTPClient transport) implements
/// ``stream(_:)`` too, so that downloads, uploads from files and server-sent events never hold a whole body in
/// memory. A request's ``TransportRequest/streamedBody``, when set, is the body to send.
///
/// ## Implementing a transport
///
/// A transport that answers every request from a table, as you might write for a test:
///
/// ```swift
/// struct FixtureTransport: HTTPTransport {
///     let fixtures: [String: Data]
///
///     func send(_ request: TransportRequest) async throws -> TransportResponse {
///         guard let body = fixtures[request.url.path] else {
///             return TransportResponse(statusCode: 404)
///         }
///         return TransportResponse(statusCode: 200, headers: ["Content-Type": "application/json"], body: body)
///     }
/// }
/// ```
///
/// Throw ``APIError/transport(_:underlying:)`` to say what kind of failure happened, so the
/// ``RetryPolicy`` can tell a dropped connection from a permanent error; any other error is treated as
/// ``TransportFailure/other``.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the response, whatever its status code.
    ///
    /// - Parameter request: The request to send, fully built and authorized.
    /// - Returns: The response with its whole body.
    /// - Throws: ``APIError`` for transport failures, `CancellationError` when the caller cancelled.
    func send(_ request: TransportRequest) async throws -> TransportResponse

    /// Sends `request` and returns the response, or throws ``TransportDeadline/timeoutError`` once `deadline`
    /// passes. This is what ``APIClient`` calls for every attempt.
    ///
    /// The default runs ``send(_:)`` in a task of its own and races it against the deadline, so any transport
    /// keeps its deadlines. A transport that can stop an exchange from outside implements this itself with
    /// ``TransportDeadline/onExpiry(_:)`` and saves that task.
    ///
    /// - Parameters:
    ///   - request: The request to send, fully built and authorized.
    ///   - deadline: When the attempt must end, on the client's clock.
    /// - Returns: The response with its whole body.
    /// - Throws: ``TransportDeadline/timeoutError`` past the deadline, ``APIError`` for transport failures,
    ///   `CancellationError` when the caller cancelled.
    func send(_ request: TransportRequest, deadline: TransportDeadline) async throws -> TransportResponse

    /// Sends `request` and returns as soon as the response's head has arrived; the body follows as a stream.
    ///
    /// The default reads a ``TransportRequest/streamedBody`` whole, calls ``send(_:)`` and hands back the
    /// body as one chunk: correct for any transport, streaming for none.
    ///
    /// - Parameter request: The request to send, fully built and authorized.
    /// - Returns: The status and header fields, with the body still arriving.
    /// - Throws: ``APIError`` for transport failures, `CancellationError` when the caller cancelled.
    func stream(_ request: TransportRequest) async throws -> StreamedTransportResponse
}

extension HTTPTransport {
    /// Runs ``send(_:)`` in a task of its own, raced against `deadline`: the caller gets
    /// ``TransportDeadline/timeoutError`` the moment the deadline passes, even from a transport that ignores
    /// cancellation, and the late answer is dropped.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - deadline: When the attempt must end.
    /// - Returns: The response with its whole body.
    public func send(_ request: TransportRequest, deadline: TransportDeadline) async throws -> TransportResponse {
        try await deadline.race { try await send(request) }
    }

    /// Buffers: reads a streamed request body whole, sends with ``send(_:)``, and returns the body as one chunk.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The response, its body as a single chunk.
    public func stream(_ request: TransportRequest) async throws -> StreamedTransportResponse {
        var request = request
        if let streamed = request.streamedBody {
            request.body = try await streamed.collect()
            request.streamedBody = nil
        }
        return StreamedTransportResponse(try await send(request))
    }
}
