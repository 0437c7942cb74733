/// Changes a request before every attempt: adds a header, signs it, rewrites its URL.
///
/// Adapters run in order, after the request is built and before it is authorized and sent, and they
/// run again on every retry, so a signature or a timestamp is always fresh. An adapter that throws
/// fails the call with ``APIError/adapterFailed(_:)``; nothing is sent.
///
/// The first run happens before the ``ResponseCache`` and the coalescer look at the request, so `Vary` is
/// matched against the request as sent. Headers an adapter adds can make two callers' requests different in a way
/// the cache and the coalescing key would not see (a tenant, a user): declare them in ``variesOn``. A call whose
/// headers are changed by an adapter that declares nothing (`nil`, the default) is kept private: it is neither
/// shared with other callers nor stored in or answered from the cache.
///
/// ```swift
/// struct APIKeyAdapter: RequestAdapter {
///     let key: String
///     func adapt(_ request: TransportRequest) async throws -> TransportRequest {
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
    func adapt(_ request: TransportRequest) async throws -> TransportRequest

    /// The header names this adapter sets whose values change the response (a tenant, a user, a locale).
    ///
    /// Their values partition the cache and enter the coalescing key, like credentials (they join the request's
    /// ``TransportRequest/credentials``). `[]` declares that nothing the adapter sets changes the response (a trace id,
    /// a signature), so calls stay shareable. `nil`, the default, means unknown: a call whose headers this adapter
    /// changes is neither shared nor cached.
    var variesOn: [String]? { get }
}

extension RequestAdapter {
    /// `nil`: unknown, so a call whose headers this adapter changes is neither shared nor cached.
    public var variesOn: [String]? { nil }
}

/// A ``RequestAdapter`` made from a closure that edits the request in place.
///
/// ```swift
/// let traced = AnyRequestAdapter { request in
///     request.headers["X-Request-ID"] = UUID().uuidString
/// }
/// ```
public struct AnyRequestAdapter: RequestAdapter {
    private let body: @Sendable (inout TransportRequest) async throws -> Void
    /// The header names `body` sets whose values change the response; see ``RequestAdapter/variesOn``.
    public let variesOn: [String]?

    /// Creates an adapter that runs `body` on each request.
    ///
    /// - Parameters:
    ///   - variesOn: The header names `body` sets whose values change the response; `[]` when none do, `nil`
    ///     (the default) when unknown. See ``RequestAdapter/variesOn``.
    ///   - body: Edits the request in place; throwing fails the call.
    public init(variesOn: [String]? = nil, _ body: @escaping @Sendable (inout TransportRequest) async throws -> Void) {
        self.variesOn = variesOn
        self.body = body
    }

    /// Runs the closure on a copy of `request` and returns it.
    ///
    /// - Parameter request: The request as built, or as the previous adapter returned it.
    /// - Returns: The request as the closure left it.
    public func adapt(_ request: TransportRequest) async throws -> TransportRequest {
        var request = request
        try await body(&request)
        return request
    }
}
