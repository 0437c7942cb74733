import Foundation

/// A fully built HTTP request, as it is handed to an ``HTTPTransport``.
///
/// ``APIClient`` turns a ``Request`` into an `HTTPRequest` (base URL, path, query, headers and encoded
/// body), runs the configured ``RequestAdapter``s on it before every attempt, and sends it.
/// Transports and adapters see only this value type.
public struct HTTPRequest: Sendable, Hashable {
    /// The request method.
    public var method: HTTPMethod
    /// The absolute URL of the target resource.
    public var url: URL
    /// The header fields to send.
    public var headers: HTTPHeaders
    /// The body to send, or `nil` for none.
    public var body: Data?

    /// Creates a request.
    ///
    /// - Parameters:
    ///   - method: The request method.
    ///   - url: The absolute URL of the target resource.
    ///   - headers: The header fields to send.
    ///   - body: The body to send, or `nil` for none.
    public init(method: HTTPMethod = .get, url: URL, headers: HTTPHeaders = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

extension HTTPRequest: CustomStringConvertible {
    /// `METHOD url`, with no headers or body, so that it never shows a credential.
    public var description: String {
        "\(method) \(url.absoluteString)"
    }
}
