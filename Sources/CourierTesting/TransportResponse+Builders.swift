import Courier
import Foundation

extension TransportResponse {
    /// A response with a UTF-8 text body: `.text(404, "no such user")`.
    ///
    /// - Parameters:
    ///   - status: The status code.
    ///   - body: The body, as UTF-8 text; empty for none.
    ///   - headers: The header fields.
    public static func text(_ status: Int, _ body: String = "", headers: HeaderFields = [:]) -> TransportResponse {
        TransportResponse(statusCode: status, headers: headers, body: Data(body.utf8))
    }

    /// A JSON response: the body as given, with `Content-Type: application/json` unless `headers` names one.
    ///
    /// - Parameters:
    ///   - body: The JSON text.
    ///   - status: The status code; `200` by default.
    ///   - headers: The header fields.
    public static func json(_ body: String, status: Int = 200, headers: HeaderFields = [:]) -> TransportResponse {
        var headers = headers
        if headers["Content-Type"] == nil { headers["Content-Type"] = "application/json" }
        return TransportResponse(statusCode: status, headers: headers, body: Data(body.utf8))
    }

    /// A JSON response with `value` encoded by `encoder`.
    ///
    /// - Parameters:
    ///   - value: What to encode.
    ///   - status: The status code; `200` by default.
    ///   - headers: The header fields.
    ///   - encoder: The encoder; a plain `JSONEncoder` by default.
    /// - Throws: What the encoder throws.
    public static func json(
        encoding value: some Encodable, status: Int = 200, headers: HeaderFields = [:],
        encoder: JSONEncoder = JSONEncoder()
    ) throws -> TransportResponse {
        var response = json("", status: status, headers: headers)
        response.body = try encoder.encode(value)
        return response
    }
}
