import Foundation

/// An HTTP response as a transport received it: status, header fields and the whole body.
public struct TransportResponse: Sendable, Hashable {
    /// The status code, such as `200` or `404`.
    public var statusCode: Int
    /// The header fields.
    public var headers: HeaderFields
    /// The body; empty when the response had none.
    public var body: Data

    /// Creates a response.
    ///
    /// - Parameters:
    ///   - statusCode: The status code.
    ///   - headers: The header fields.
    ///   - body: The body; empty for none.
    public init(statusCode: Int, headers: HeaderFields = [:], body: Data = Data()) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
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
