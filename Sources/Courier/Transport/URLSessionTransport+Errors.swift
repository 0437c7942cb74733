import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionTransport {
    /// What the transport had received when a task failed: the response head and how many body bytes.
    typealias Received = (head: HTTPURLResponse, bytes: Int)

    /// Maps URLSession's errors onto Courier's, keeping the original as the cause.
    ///
    /// - `URLError.cancelled` is `CancellationError` only when the caller cancelled (`cancelledByCaller`); URLSession
    ///   also cancels tasks by itself, when the session is invalidated, and a caller who never cancelled must not
    ///   read that as its own cancellation: it is a ``TransportFailure/other`` failure.
    /// - On Linux, URLSession reports a reply that is not HTTP/1.x (a garbage status line, `HTTP/9.9`, an
    ///   HTTP/0.9-style body) as `unsupportedURL`; for an http(s) URL that can only be the server's fault, so it
    ///   is a ``TransportFailure/badServerResponse``.
    /// - A body that ends before its `Content-Length` (libcurl: "transfer closed with 990 bytes remaining to read",
    ///   reported as `URLError.unknown`) is a ``TransportFailure/connectionLost``: the connection ended mid-body,
    ///   and an idempotent request may be retried.
    /// - A head FoundationNetworking cannot read (it decodes each header line as UTF-8, so a Latin-1
    ///   `Content-Disposition` fails the whole response, as libcurl's "Failed writing header") is
    ///   ``APIError/invalidResponse(reason:underlying:)`` saying so. The bytes never reach Courier, so the
    ///   response cannot be recovered by decoding the value as ISO-8859-1 instead.
    static func translate(
        _ error: any Error, for url: URL? = nil, cancelledByCaller: Bool = false, received: Received? = nil
    ) -> any Error {
        if error is CancellationError { return error }
        guard let urlError = error as? URLError else {
            return APIError.transport(.other, underlying: error)
        }
        switch urlError.code {
        case .cancelled:
            return cancelledByCaller ? CancellationError() : APIError.transport(.other, underlying: urlError)
        case .unsupportedURL where ["http", "https"].contains(url?.scheme?.lowercased() ?? ""):
            return APIError.transport(.badServerResponse, underlying: urlError)
        case .unknown:
            if let received, endedBeforeItsLength(received) {
                return APIError.transport(.connectionLost, underlying: urlError)
            }
            if received == nil, isUnreadableHead(urlError) {
                return APIError.invalidResponse(reason: unreadableHeadReason, underlying: urlError)
            }
        default:
            break
        }
        return APIError.transport(failure(for: urlError.code), underlying: urlError)
    }

    static let unreadableHeadReason =
        "a header line could not be read (FoundationNetworking reads each header line as UTF-8 ending in CRLF; "
        + "a Latin-1 value, for example, is not)"

    /// A body of known, unencoded length that stopped short of it.
    private static func endedBeforeItsLength(_ received: Received) -> Bool {
        let encoding = received.head.value(forHTTPHeaderField: "Content-Encoding")?.lowercased() ?? "identity"
        let length = received.head.expectedContentLength
        return encoding == "identity" && length > 0 && Int64(received.bytes) < length
    }

    /// libcurl's message for a header callback that refused a line (7.x, then 8.x wording). Before any head was
    /// received, a write error can only come from the header callback.
    private static func isUnreadableHead(_ error: URLError) -> Bool {
        let message = (error.userInfo[NSLocalizedDescriptionKey] as? String) ?? ""
        return message.contains("Failed writing header") || message.contains("Failure writing output")
    }

    static func failure(for code: URLError.Code) -> TransportFailure {
        switch code {
        case .timedOut: .timedOut
        case .cannotConnectToHost: .cannotConnect
        case .networkConnectionLost: .connectionLost
        case .cannotFindHost, .dnsLookupFailed: .dnsFailure
        case .notConnectedToInternet, .internationalRoamingOff, .dataNotAllowed: .notConnected
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected,
            .clientCertificateRequired:
            .secureConnectionFailed
        case .badServerResponse, .cannotParseResponse, .cannotDecodeRawData, .cannotDecodeContentData:
            .badServerResponse
        default: .other
        }
    }
}
