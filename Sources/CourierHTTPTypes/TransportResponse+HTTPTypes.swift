#if OpenAPI
    import Courier
    import Foundation
    import HTTPTypes

    extension HTTPResponse {
        /// The status codes a response can carry: three digits (RFC 9110 §15).
        static let validStatusCodes = 100...999

        /// Creates an HTTPTypes response head from a Courier response: the status code and the header fields in order.
        ///
        /// HTTPTypes keeps the body apart; pass ``TransportResponse/body`` alongside. The reason phrase is empty:
        /// Courier does not keep one (HTTP/2 has none either).
        ///
        /// - Parameter response: The response to convert.
        /// - Throws: ``APIError/invalidResponse(reason:underlying:)`` for a status code that is not three digits (which
        ///   `HTTPResponse.Status` would stop the process for) or a header field HTTPTypes cannot carry.
        public init(_ response: TransportResponse) throws(APIError) {
            guard Self.validStatusCodes.contains(response.statusCode) else {
                throw .invalidResponse(
                    reason: "the status code \(response.statusCode) is not three digits", underlying: nil)
            }
            self.init(
                status: Status(code: response.statusCode),
                headerFields: try HTTPFields(response.headers, invalid: FieldProblem.responseError))
        }
    }

    extension TransportResponse {
        /// Creates a Courier response from an HTTPTypes response head and its body.
        ///
        /// Lossless but for the reason phrase, which Courier does not keep.
        ///
        /// - Parameters:
        ///   - response: The response head.
        ///   - body: The body; empty for none.
        public init(_ response: HTTPResponse, body: Data = Data()) {
            self.init(statusCode: response.status.code, headers: HeaderFields(response.headerFields), body: body)
        }
    }
#endif
