import Foundation

/// A response whose status and header fields have arrived and whose body is still arriving, returned by
/// ``APIClient/stream(_:)``.
///
/// Read ``body`` once, from one task. Cancelling that task, or letting the body go unread, stops the transfer.
///
/// ```swift
/// let response = try await client.stream(APIRequest<Data>.get("/exports/today.csv"))
/// print(response.statusCode, response.headers["Content-Type"] ?? "")
/// for try await chunk in response.body {
///     consume(chunk)
/// }
/// ```
public struct StreamedResponse: Sendable {
    /// The status code; always one of the client's ``APIClient/Configuration/acceptableStatusCodes``.
    public let statusCode: Int
    /// The header fields.
    public let headers: HeaderFields
    /// The URL of the request as it was last sent.
    public let url: URL
    /// Where the response came from: the network, or the cache when a stored response could serve it.
    public let source: ResponseSource
    /// How many attempts the call took (0 when served from the cache).
    public let attempts: Int
    /// The body, chunk by chunk. Its errors are ``APIError``s (or `CancellationError`), redacted like the client's.
    public let body: ByteStream
}

/// What the streamed path of a call produced: the request as last sent, the streamed response and how it was
/// obtained. The streamed counterpart of ``Exchange``.
struct StreamedExchange: Sendable {
    var request: TransportRequest
    var response: StreamedTransportResponse
    var attempts: Int
    var source: ResponseSource = .network

    init(request: TransportRequest, response: StreamedTransportResponse, attempts: Int, source: ResponseSource) {
        self.request = request
        self.response = response
        self.attempts = attempts
        self.source = source
    }

    /// The pipeline's exchange as a streamed shape hands it over: the body still arriving, or (a stored response, an
    /// error's body) whole as one chunk.
    init(_ exchange: Exchange) {
        let head = exchange.response
        self.init(
            request: exchange.request,
            response: exchange.bodyStream.map {
                StreamedTransportResponse(statusCode: head.statusCode, headers: head.headers, body: $0)
            } ?? StreamedTransportResponse(head),
            attempts: exchange.attempts, source: exchange.source)
    }

    var streamedResponse: StreamedResponse {
        StreamedResponse(
            statusCode: response.statusCode, headers: response.headers, url: request.url, source: source,
            attempts: attempts, body: response.body)
    }

    /// The same exchange with its whole body read (at most `limit` bytes): for a response that is decoded, or
    /// carried by an error.
    func collected(upTo limit: Int) async throws -> Exchange {
        Exchange(
            request: request, response: try await response.collect(upTo: limit), attempts: attempts, source: source)
    }
}
