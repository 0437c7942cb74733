import Foundation

/// Turns a response whose status the client does not accept into an error of your own type.
///
/// Most APIs explain a failure in a JSON body (`{"code": "out_of_stock", "message": "…"}`). Give the client (in
/// ``APIClient/Configuration/errorMapping``) or one request (``APIRequest/errorMapping``, which wins) a mapping, and
/// `send` throws your error instead of ``APIError/unacceptableStatus(_:)``:
///
/// ```swift
/// struct ShopError: Error, Decodable { let code: String; let message: String }
///
/// configuration.errorMapping = .decoding(ShopError.self)
/// do {
///     try await client.send(APIRequest<Order>.post("/orders", body: order))
/// } catch let error as ShopError where error.code == "out_of_stock" {
///     …
/// }
/// ```
///
/// When the mapping returns `nil` (the body is not what it expected: an HTML error page from a proxy, an empty
/// `502`), the caller gets ``APIError/unacceptableStatus(_:)`` as before, so no failure is ever lost. The mapping
/// runs once per caller, after retries gave up and after a rejected credential was refreshed; it never sees a
/// response the client accepts.
public struct ResponseErrorMapping: Sendable {
    private let transform: @Sendable (TransportResponse) -> (any Error)?

    /// A mapping from a closure.
    ///
    /// - Parameter transform: The error to throw for a response, or `nil` to throw
    ///   ``APIError/unacceptableStatus(_:)``.
    public init(_ transform: @escaping @Sendable (_ response: TransportResponse) -> (any Error)?) {
        self.transform = transform
    }

    /// A mapping that decodes the body as `type` with `decoder`, and throws it; `nil` (so
    /// ``APIError/unacceptableStatus(_:)``) when the body does not decode.
    ///
    /// - Parameters:
    ///   - type: Your error type, decoded from the response body as JSON.
    ///   - decoder: The decoder; a plain `JSONDecoder` by default.
    public static func decoding<Failure: Error & Decodable>(
        _ type: Failure.Type, using decoder: JSONDecoder = JSONDecoder()
    ) -> ResponseErrorMapping {
        ResponseErrorMapping { response in try? decoder.decode(Failure.self, from: response.body) }
    }

    /// The error to throw for `response`: the mapping's, or ``APIError/unacceptableStatus(_:)``.
    func error(for response: TransportResponse) -> any Error {
        transform(response) ?? APIError.unacceptableStatus(response)
    }
}

extension APIClient {
    /// What a caller whose response has an unacceptable status gets: the request's mapping, else the client's, else
    /// ``APIError/unacceptableStatus(_:)``.
    func unacceptableStatusError(_ response: TransportResponse, for request: RequestFields) -> any Error {
        guard let mapping = request.errorMapping ?? configuration.errorMapping else {
            return APIError.unacceptableStatus(response)
        }
        return mapping.error(for: response)
    }

    /// Whether `response` says the credential the attempt carried is no longer good, so the authenticator refreshes it
    /// and the request is sent again once. Without an authenticator only a `401` counts (and fails with
    /// ``APIError/unauthorized(_:)``); with one, ``Configuration/isCredentialRejected`` decides.
    func isCredentialRejected(_ response: TransportResponse, authorized: Bool) -> Bool {
        authorized ? configuration.isCredentialRejected(response) : response.statusCode == 401
    }

    /// The decoder for `request`'s body: its own, or the client's.
    @usableFromInline
    func decoder(for request: RequestFields) -> JSONDecoder {
        request.decoder ?? configuration.decoder
    }
}
