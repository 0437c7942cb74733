import Foundation

/// The body of a ``APIRequest``: raw bytes, or a value that ``APIClient`` encodes as JSON when it
/// builds the request.
///
/// Encoding happens before anything is sent, so a value that cannot be encoded fails the call
/// with ``APIError/encodingFailed(_:)`` and the server never sees a partial request.
public enum RequestPayload: Sendable {
    /// Bytes sent as they are, with an optional `Content-Type`.
    case data(Data, contentType: String?)
    /// A value encoded with the client's `JSONEncoder`, sent as `application/json`.
    case json(any Encodable & Sendable)
}
