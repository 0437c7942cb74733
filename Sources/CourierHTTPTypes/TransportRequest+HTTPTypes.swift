#if OpenAPI
    import Courier
    import Foundation
    import HTTPTypes

    extension HTTPRequest {
        /// Creates an HTTPTypes request from a Courier request: the method, the URL as `:scheme`, `:authority` and
        /// `:path` (path and query, exactly as percent-encoded in the URL), and the header fields in order.
        ///
        /// HTTPTypes keeps the body apart; send ``TransportRequest/body`` alongside. The URL's fragment is not part
        /// of a request and is dropped.
        ///
        /// - Parameter request: The request to convert.
        /// - Throws: ``APIError/invalidRequest(_:)`` for what HTTPTypes cannot express: a method that is not a token, a
        ///   URL that is not `http(s)` or carries user information (an `:authority` may not, RFC 9113 §8.3.1), or a
        ///   header field that `HTTPFields.init(_:)` refuses.
        public init(_ request: TransportRequest) throws(APIError) {
            guard let method = HTTPRequest.Method(request.method.rawValue) else {
                throw .invalidRequest(.invalidMethod(request.method.rawValue))
            }
            let target = try RequestTarget(request.url)
            self.init(
                method: method, scheme: target.scheme, authority: target.authority, path: target.path,
                headerFields: try HTTPFields(request.headers))
        }
    }

    extension TransportRequest {
        /// Creates a Courier request from an HTTPTypes request and its body.
        ///
        /// - Parameters:
        ///   - request: The request head. Its `:scheme`, `:authority` and `:path` make the URL, used as written.
        ///   - body: The body, or `nil` for none.
        ///   - credentials: Which parts of the request are credentials; see ``TransportRequest/credentials``.
        /// - Throws: ``APIError/invalidRequest(_:)`` for what a Courier request cannot express: a missing or non-`http(s)`
        ///   scheme, a missing authority, a path that is not absolute (the `OPTIONS *` and `CONNECT host:port` forms),
        ///   and the extended `CONNECT` `:protocol` pseudo-header (RFC 8441).
        public init(_ request: HTTPRequest, body: Data? = nil, credentials: CredentialPolicy = .standard)
            throws(APIError)
        {
            guard request.extendedConnectProtocol == nil else {
                throw .invalidRequest(.invalidHeaderName(":protocol"))
            }
            let target = try RequestTarget(scheme: request.scheme, authority: request.authority, path: request.path)
            self.init(
                method: RequestMethod(rawValue: request.method.rawValue), url: try target.url(),
                headers: HeaderFields(request.headerFields), body: body, credentials: credentials)
        }
    }
#endif
