/// The seam between Courier and the network: sends one request and returns the whole response.
///
/// ``APIClient`` calls a transport once per attempt, after building the request, running adapters and
/// authorizing it. Retries, deadlines, coalescing and caching all happen above this seam, so a transport
/// only moves bytes. ``URLSessionTransport`` is the default; tests and other stacks plug in their own.
///
/// A transport must be safe to call from many tasks at once, and should stop promptly when the calling
/// task is cancelled (throwing `CancellationError`).
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
}
