/// Changes a request before every attempt: adds a header, signs it, rewrites its URL.
///
/// Adapters run in order, after the request is built and before it is authorized and sent, and they
/// run again on every retry, so a signature or a timestamp is always fresh. An adapter that throws
/// fails the call with ``APIError/adapterFailed(_:)``; nothing is sent.
///
/// ```swift
/// struct APIKeyAdapter: RequestAdapter {
///     let key: String
///     func adapt(_ request: HTTPRequest) async throws -> HTTPRequest {
///         var request = request
///         request.headers["X-API-Key"] = key
///         return request
///     }
/// }
/// ```
public protocol RequestAdapter: Sendable {
    /// Returns the request to send in place of `request`.
    ///
    /// - Parameter request: The request as built, or as the previous adapter returned it.
    /// - Returns: The request to send.
    func adapt(_ request: HTTPRequest) async throws -> HTTPRequest
}

/// A ``RequestAdapter`` made from a closure that edits the request in place.
///
/// ```swift
/// let traced = AnyRequestAdapter { request in
///     request.headers["X-Request-ID"] = UUID().uuidString
/// }
/// ```
public struct AnyRequestAdapter: RequestAdapter {
    private let body: @Sendable (inout HTTPRequest) async throws -> Void

    /// Creates an adapter that runs `body` on each request.
    ///
    /// - Parameter body: Edits the request in place; throwing fails the call.
    public init(_ body: @escaping @Sendable (inout HTTPRequest) async throws -> Void) {
        self.body = body
    }

    /// Runs the closure on a copy of `request` and returns it.
    ///
    /// - Parameter request: The request as built, or as the previous adapter returned it.
    /// - Returns: The request as the closure left it.
    public func adapt(_ request: HTTPRequest) async throws -> HTTPRequest {
        var request = request
        try await body(&request)
        return request
    }
}
