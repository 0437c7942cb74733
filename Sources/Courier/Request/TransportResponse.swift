import Foundation

/// An HTTP response as a transport received it: status, header fields and the whole body.
public struct TransportResponse: Sendable, Hashable {
    /// The status code, such as `200` or `404`.
    public var statusCode: Int
    /// The header fields.
    public var headers: HeaderFields
    /// The body; empty when the response had none.
    public var body: Data
    /// The URL this response came from, after any redirects the transport followed; `nil` when the transport does
    /// not say (then it is the request's URL).
    public var url: URL?

    /// Creates a response.
    ///
    /// - Parameters:
    ///   - statusCode: The status code.
    ///   - headers: The header fields.
    ///   - body: The body; empty for none.
    ///   - url: The URL the response came from after redirects; `nil` for the request's.
    public init(statusCode: Int, headers: HeaderFields = [:], body: Data = Data(), url: URL? = nil) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.url = url
    }

    /// Whether the status is in the 2xx range.
    public var isSuccess: Bool { (200..<300).contains(statusCode) }
}

extension TransportResponse: CustomStringConvertible {
    /// The status code and body size; headers and body are left out so that nothing secret is printed.
    public var description: String {
        "HTTP \(statusCode) (\(body.count) bytes)"
    }
}
