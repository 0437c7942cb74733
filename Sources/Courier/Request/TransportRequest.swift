import Foundation

/// A fully built HTTP request, as it is handed to an ``HTTPTransport``.
///
/// ``APIClient`` turns a ``APIRequest`` into an `TransportRequest` (base URL, path, query, headers and encoded
/// body), runs the configured ``RequestAdapter``s on it before every attempt, and sends it.
/// Transports and adapters see only this value type.
public struct TransportRequest: Sendable, Hashable {
    /// The request method.
    public var method: RequestMethod
    /// The absolute URL of the target resource.
    public var url: URL
    /// The header fields to send.
    public var headers: HeaderFields
    /// The body to send, or `nil` for none.
    public var body: Data?
    /// A body produced while it is sent (a file, a stream of chunks), sent instead of ``body`` when set.
    ///
    /// A transport that sends only buffered bodies reads it whole first; ``HTTPTransport/stream(_:)``'s default
    /// does that.
    public var streamedBody: StreamedBody?
    /// Which parts of this request are credentials: what its ``description`` and events redact, what
    /// partitions its cache entries and coalescing key, and what a transport strips when a redirect leads to
    /// another origin. ``APIClient`` sets its configured policy here; ``CredentialPolicy/standard`` by default.
    public var credentials: CredentialPolicy
    /// Which redirects the transport follows for this request; ``RedirectPolicy/default`` (follow up to 20) unless
    /// the client's or the request's policy says otherwise.
    public var redirectPolicy: RedirectPolicy = .default

    /// Creates a request.
    ///
    /// - Parameters:
    ///   - method: The request method.
    ///   - url: The absolute URL of the target resource.
    ///   - headers: The header fields to send.
    ///   - body: The body to send, or `nil` for none.
    ///   - credentials: Which parts of the request are credentials.
    public init(
        method: RequestMethod = .get, url: URL, headers: HeaderFields = [:], body: Data? = nil,
        credentials: CredentialPolicy = .standard
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.credentials = credentials
    }
}

extension TransportRequest: CustomStringConvertible, CustomReflectable {
    /// `METHOD url`, with no headers or body, and the URL's credentials (secret query values, password)
    /// shown as `<redacted>`.
    public var description: String {
        "\(method) \(Redaction(credentials).redact(url))"
    }

    /// The method, the redacted URL, the headers with credential values redacted, and the body's size:
    /// `dump` and reflection-based loggers never show a credential.
    public var customMirror: Mirror {
        let redaction = Redaction(credentials)
        return Mirror(
            self,
            children: [
                "method": method.rawValue,
                "url": redaction.redact(url),
                "headers": redaction.redact(headers),
                "body": streamedBody.map { body in body.length.map { "streamed, \($0) bytes" } ?? "streamed" }
                    ?? body.map { "\($0.count) bytes" } ?? "none",
            ],
            displayStyle: .struct)
    }
}
