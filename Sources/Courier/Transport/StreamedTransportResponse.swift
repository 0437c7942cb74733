import Foundation

/// A response whose head (status and header fields) has arrived and whose body is still arriving.
///
/// Returned by ``HTTPTransport/stream(_:)``. Read ``body`` once; a reader that stops early should let the
/// stream go (or cancel its task) so that the transport can stop the transfer.
public struct StreamedTransportResponse: Sendable {
    /// The status code, such as `200` or `404`.
    public var statusCode: Int
    /// The header fields.
    public var headers: HeaderFields
    /// The body, chunk by chunk.
    public var body: ByteStream

    /// Creates a streamed response.
    ///
    /// - Parameters:
    ///   - statusCode: The status code.
    ///   - headers: The header fields.
    ///   - body: The body's chunks.
    public init(statusCode: Int, headers: HeaderFields = [:], body: ByteStream = .empty) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
    }

    /// Creates a streamed response over a buffered one: its body is one chunk.
    ///
    /// - Parameter response: The whole response.
    public init(_ response: TransportResponse) {
        self.init(statusCode: response.statusCode, headers: response.headers, body: ByteStream(response.body))
    }

    /// Reads the whole body and returns the buffered response.
    ///
    /// - Parameter limit: The most body bytes to accept.
    /// - Returns: The response with its whole body.
    /// - Throws: ``APIError/responseTooLarge(limit:)`` past `limit`, or the error the body ended with.
    public func collect(upTo limit: Int) async throws -> TransportResponse {
        TransportResponse(statusCode: statusCode, headers: headers, body: try await body.collect(upTo: limit))
    }
}
