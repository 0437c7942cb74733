import Foundation

extension APIRequest {
    // MARK: Reading

    /// A `GET` request.
    ///
    /// - Parameters:
    ///   - path: A path relative to the base URL, or an absolute URL.
    ///   - query: Query items to append.
    ///   - headers: Header fields for this request.
    public static func get(_ path: String, query: [URLQueryItem] = [], headers: HeaderFields = [:]) -> APIRequest {
        APIRequest(method: .get, path: path, query: query, headers: headers)
    }

    /// A `HEAD` request.
    ///
    /// - Parameters:
    ///   - path: A path relative to the base URL, or an absolute URL.
    ///   - query: Query items to append.
    ///   - headers: Header fields for this request.
    public static func head(_ path: String, query: [URLQueryItem] = [], headers: HeaderFields = [:]) -> APIRequest {
        APIRequest(method: .head, path: path, query: query, headers: headers)
    }

    // MARK: Writing

    /// A `POST` request whose body is `body` encoded as JSON (or sent as-is when it is `Data`).
    ///
    /// - Parameters:
    ///   - path: A path relative to the base URL, or an absolute URL.
    ///   - body: The value to encode, or `nil` for no body.
    ///   - query: Query items to append.
    ///   - headers: Header fields for this request.
    public static func post(
        _ path: String, body: (any Encodable & Sendable)? = nil, query: [URLQueryItem] = [], headers: HeaderFields = [:]
    ) -> APIRequest {
        APIRequest(method: .post, path: path, query: query, headers: headers, body: RequestPayload(body))
    }

    /// A `PUT` request whose body is `body` encoded as JSON (or sent as-is when it is `Data`).
    ///
    /// - Parameters:
    ///   - path: A path relative to the base URL, or an absolute URL.
    ///   - body: The value to encode, or `nil` for no body.
    ///   - query: Query items to append.
    ///   - headers: Header fields for this request.
    public static func put(
        _ path: String, body: (any Encodable & Sendable)? = nil, query: [URLQueryItem] = [], headers: HeaderFields = [:]
    ) -> APIRequest {
        APIRequest(method: .put, path: path, query: query, headers: headers, body: RequestPayload(body))
    }

    /// A `PATCH` request whose body is `body` encoded as JSON (or sent as-is when it is `Data`).
    ///
    /// - Parameters:
    ///   - path: A path relative to the base URL, or an absolute URL.
    ///   - body: The value to encode, or `nil` for no body.
    ///   - query: Query items to append.
    ///   - headers: Header fields for this request.
    public static func patch(
        _ path: String, body: (any Encodable & Sendable)? = nil, query: [URLQueryItem] = [], headers: HeaderFields = [:]
    ) -> APIRequest {
        APIRequest(method: .patch, path: path, query: query, headers: headers, body: RequestPayload(body))
    }

    /// A `DELETE` request.
    ///
    /// - Parameters:
    ///   - path: A path relative to the base URL, or an absolute URL.
    ///   - query: Query items to append.
    ///   - headers: Header fields for this request.
    public static func delete(_ path: String, query: [URLQueryItem] = [], headers: HeaderFields = [:]) -> APIRequest {
        APIRequest(method: .delete, path: path, query: query, headers: headers)
    }
}

extension RequestPayload {
    /// Wraps a builder's `body:` argument: `Data` is sent as it is, anything else is encoded as JSON.
    init?(_ value: (any Encodable & Sendable)?) {
        switch value {
        case nil: return nil
        case let data as Data: self = .data(data, contentType: nil)
        case let value?: self = .json(value)
        }
    }
}
