import Foundation

/// Everything that can go wrong with a call, as one enum whose cases say what happened and keep the cause.
///
/// Every case reads as a sentence through ``description`` and carries what is needed to act on it: the
/// response for a bad status, the underlying error for a transport or decoding failure. Descriptions
/// never contain credentials: header values are not printed, URLs show secret query values and passwords as
/// `<redacted>`, and a response body (which may echo a secret) is counted, never quoted: read it from
/// ``response``. An error thrown by ``APIClient`` is also redacted with the client's
/// ``APIClient/Configuration/credentials``, down to the URLs inside a wrapped `URLError`.
///
/// Cancellation is not an `APIError`: a caller that cancels gets `CancellationError`.
public enum APIError: Error, Sendable {
    /// The request could not be built, so nothing was sent.
    case invalidRequest(InvalidRequestReason)
    /// The request body could not be encoded, so nothing was sent. Carries the encoder's error.
    case encodingFailed(any Error)
    /// A ``RequestAdapter`` threw, so the attempt was not sent. Carries the adapter's error.
    case adapterFailed(any Error)
    /// The transport could not complete the exchange: the connection failed, the host was not found,
    /// the server closed the connection. Carries what kind of failure it was and the transport's error.
    case transport(TransportFailure, underlying: any Error)
    /// An attempt took longer than its deadline and was abandoned; or, reading a streamed body, no chunk arrived
    /// within the request's ``APIRequest/timeout`` and the transfer was stopped.
    case timedOut(Duration)
    /// The server answered with a status code the client does not accept (by default, anything outside
    /// 2xx). Carries the whole response, body included, so the server's error message can be read.
    case unacceptableStatus(TransportResponse)
    /// The body could not be decoded as the requested type. Carries the decoder's error and the response.
    case decodingFailed(type: String, underlying: any Error, response: TransportResponse)
    /// The server sent something that is not a valid HTTP response.
    case invalidResponse(reason: String, underlying: (any Error)?)
    /// The response body was larger than the transport accepts (``URLSessionTransport/maxResponseBytes``), counted
    /// after decoding any `Content-Encoding`; the transport stopped reading it. Carries the limit in bytes.
    case responseTooLarge(limit: Int)
    /// The request could not use the network (``CachePolicy/onlyIfCached`` or `Cache-Control: only-if-cached`)
    /// and the cache held no usable response (RFC 9111 §5.2.1.7), so nothing was sent. Carries the URL.
    case notCached(URL)
    /// The server answered `401 Unauthorized`, and a refreshed credential could not fix it: the resend
    /// with a refreshed credential was refused too, or the client has no authenticator for the request.
    /// Carries the last response.
    case unauthorized(TransportResponse)
    /// No credential could be provided for the request: the token refresh failed (now or before), was
    /// refused as one too many, or the credential changed under the request. Carries the reason and,
    /// for a failed refresh, its cause.
    case authenticationFailed(AuthenticationFailure)
    /// A file the call reads or writes could not be used: the file to upload does not exist or cannot be read, or a
    /// download's destination cannot be written. Carries the path, which of the two, and the file system's error.
    case fileAccess(FileAccessFailure)
    /// A newer request in the same latest-wins slot (``APIRequest/latestWins``) replaced this one, which was
    /// cancelled: during its debounce (nothing was sent), or in flight. Carries the slot's name.
    case superseded(slot: String)
    /// A ``ByteStream`` that already has a reader was iterated again: a stream is read once, by one iterator, and a
    /// second one (after the first or beside it) gets this error from its first `next()` instead of racing the first
    /// for chunks.
    case streamAlreadyRead
    /// The retry policy would have retried, but the client's ``RetryBudget`` was spent: retries were already a
    /// large share of recent calls, so the upstream is not sent more. Carries the last attempt's outcome (a bad
    /// status as ``unacceptableStatus(_:)``). See ``Resilience/retryBudget``.
    indirect case retryBudgetExhausted(last: APIError)
    /// The origin's ``CircuitBreaker`` is open: most recent calls to it failed, so this one was not sent. Carries the
    /// origin (`scheme://host:port`) and how long until the breaker lets a probe through (zero while probes are
    /// deciding). See ``Resilience/circuitBreaker``.
    case circuitOpen(origin: String, retryAfter: Duration)
    /// The origin's ``ConcurrencyLimit`` turned the call away: its queue was full, or no place freed before the
    /// call's deadline. Nothing was sent. See ``Resilience/concurrencyLimit``.
    case shed(origin: String, reason: ShedReason)

    /// The status code of the response, when the error carries one.
    public var statusCode: Int? {
        response?.statusCode
    }

    /// The response behind the error, when the server answered.
    public var response: TransportResponse? {
        switch self {
        case .unacceptableStatus(let response), .decodingFailed(_, _, let response), .unauthorized(let response):
            response
        case .retryBudgetExhausted(let last): last.response
        default: nil
        }
    }

    /// The error this one wraps, if any.
    public var underlyingError: (any Error)? {
        switch self {
        case .encodingFailed(let error), .adapterFailed(let error), .transport(_, let error),
            .decodingFailed(_, let error, _):
            error
        case .invalidResponse(_, let error): error
        case .authenticationFailed(let failure): failure.underlyingError
        case .fileAccess(let failure): failure.underlyingError
        case .retryBudgetExhausted(let last): last
        case .invalidRequest, .timedOut, .unacceptableStatus, .notCached, .unauthorized, .responseTooLarge,
            .superseded, .streamAlreadyRead, .circuitOpen, .shed:
            nil
        }
    }
}

/// Why ``APIClient`` refused to build a request.
public enum InvalidRequestReason: Sendable, Hashable, CustomStringConvertible {
    /// The URL could not be formed from the base URL, path and query. Carries the text that failed.
    case invalidURL(String)
    /// The path contains something no URL path may contain. Carries the path and what is wrong.
    case invalidPath(String, problem: String)
    /// A header name is empty or contains characters that are not allowed in a field name.
    case invalidHeaderName(String)
    /// A header value contains a line break or another control character. Carries the header name only,
    /// so that a credential in the value is never printed.
    case invalidHeaderValue(name: String)
    /// The method is not a token (RFC 9110 §9.1): empty, or with a space, a line break or a delimiter. Carries the
    /// method as given; its description shows only an escaped prefix.
    case invalidMethod(String)
    /// The body can be sent only once (a ``StreamedBody`` over a single sequence) and was already sent, so a
    /// retry or a resend after a 401 cannot send it again.
    case bodyNotReplayable
    /// The request would carry a credential (the authenticator's token, a credential header or query parameter, or a
    /// URL's user information) in clear text: over `http://` to a host that is not loopback. Nothing was sent.
    /// Carries the host. Use `https`, or set ``APIClient/Configuration/allowsCredentialsOverCleartext`` where the
    /// network path is trusted (a service mesh that adds TLS, a private network).
    case credentialsOverCleartext(host: String)
    /// A `multipart/form-data` form cannot be sent as given: its boundary is not one RFC 2046 §5.1.1 allows, or a
    /// part's name, file name or `Content-Type` contains a control character. Carries what is wrong, without the
    /// part's content.
    case invalidMultipartForm(String)
    /// A ``StreamedBody`` produced fewer or more bytes than its ``StreamedBody/length`` declared (a file cut or grown
    /// after it was measured, a generator that miscounted): the request is stopped rather than sent short or long.
    /// Carries the declared length and the bytes produced (when too many: the count at which the body passed its
    /// length).
    case bodyLengthMismatch(declared: Int, produced: Int)

    /// The reason as a sentence, with secret query parameter values shown as `<redacted>`.
    public var description: String {
        Redaction.standard.redact(unredactedDescription)
    }

    private var unredactedDescription: String {
        switch self {
        case .invalidURL(let text): "\"\(text)\" is not a valid http(s) URL"
        case .invalidPath(let path, let problem): "the path \"\(path)\" \(problem)"
        case .invalidHeaderName(let name): "\"\(name)\" is not a valid header name"
        case .invalidHeaderValue(let name): "the value of header \"\(name)\" contains a control character"
        case .invalidMethod(let method): "the method \(Self.excerpt(method)) is not a token (RFC 9110 §9.1)"
        case .bodyNotReplayable: "the streamed body was already sent once and cannot be produced again"
        case .credentialsOverCleartext(let host):
            "credentials are not sent in clear text: http://\(host) is not loopback; use https, or set "
                + "APIClient.Configuration.allowsCredentialsOverCleartext to true to opt in"
        case .invalidMultipartForm(let problem): "the multipart form \(problem)"
        case .bodyLengthMismatch(let declared, let produced) where produced > declared:
            "the streamed body declared \(declared) bytes but produced more (at least \(produced)); it was not sent whole"
        case .bodyLengthMismatch(let declared, let produced):
            "the streamed body declared \(declared) bytes but produced only \(produced); it was not sent whole"
        }
    }

    /// The first characters of a caller's text, quoted with control characters escaped, so that a line break
    /// shows as `\r\n` and a long text (perhaps a smuggled request with a credential in it) is cut short.
    private static func excerpt(_ text: String) -> String {
        let limit = 20
        guard text.count > limit else { return text.debugDescription }
        return String(text.prefix(limit)).debugDescription + "… (\(text.utf8.count) bytes)"
    }
}

/// The kind of transport failure, used to decide whether a retry can help.
public enum TransportFailure: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The transport's own timeout fired.
    case timedOut
    /// The server refused or did not accept the connection.
    case cannotConnect
    /// The connection dropped during the exchange.
    case connectionLost
    /// The host name could not be resolved.
    case dnsFailure
    /// The device has no network connection.
    case notConnected
    /// The TLS handshake or certificate check failed.
    case secureConnectionFailed
    /// The server's reply could not be read as HTTP.
    case badServerResponse
    /// Any other transport error.
    case other

    /// A short phrase for the kind.
    public var description: String {
        switch self {
        case .timedOut: "the transport timed out"
        case .cannotConnect: "could not connect to the server"
        case .connectionLost: "the connection was lost"
        case .dnsFailure: "the host name could not be resolved"
        case .notConnected: "there is no network connection"
        case .secureConnectionFailed: "the secure connection failed"
        case .badServerResponse: "the server sent a response that is not valid HTTP"
        case .other: "the transport failed"
        }
    }
}

extension APIError: CustomStringConvertible, LocalizedError {
    /// What happened, as a sentence. URLs in it (the request's, or one inside an underlying error) show the values
    /// of secret query parameters and passwords as `<redacted>`, and so do `Bearer` and `Basic` credentials.
    public var description: String {
        Redaction.standard.redact(unredactedDescription)
    }

    private var unredactedDescription: String {
        switch self {
        case .invalidRequest(let reason):
            Self.sentence("Invalid request, nothing was sent: \(reason)")
        case .encodingFailed(let error):
            Self.sentence("The request body could not be encoded, nothing was sent: \(error)")
        case .adapterFailed(let error):
            Self.sentence("A request adapter failed, the attempt was not sent: \(error)")
        case .transport(let failure, let error):
            "Transport failure: \(failure) (\(error))."
        case .timedOut(let duration):
            "The request timed out after \(duration.formattedSeconds)."
        case .unacceptableStatus(let response):
            "The server answered with status \(response.statusCode) (\(response.body.count) bytes)."
        case .decodingFailed(let type, let error, let response):
            Self.sentence(
                "The response (status \(response.statusCode), "
                    + "\(response.headers["Content-Type"].map { "Content-Type \($0)" } ?? "no Content-Type"), "
                    + "\(response.body.count) bytes) could not be decoded as \(type): \(Self.describe(decoding: error))"
            )
        case .invalidResponse(let reason, let error):
            Self.sentence("The server sent an invalid response: \(reason)" + (error.map { " (\($0))" } ?? ""))
        case .responseTooLarge(let limit):
            "The response body was larger than the limit of \(limit) bytes (after decoding), so it was not read."
        case .notCached(let url):
            "No usable cached response for \(url.absoluteString), and the request may not use the network."
        case .unauthorized(let response):
            "The server refused the request's credentials (status \(response.statusCode) Unauthorized), "
                + "after one token refresh and resend if the client has an authenticator."
        case .authenticationFailed(let failure):
            Self.sentence("Authentication failed: \(failure)")
        case .fileAccess(let failure):
            Self.sentence("\(failure)")
        case .superseded(let slot):
            "Superseded: a newer request in the latest-wins slot \"\(slot)\" replaced this one, which was cancelled."
        case .streamAlreadyRead:
            "The byte stream already has a reader: a stream is read once, by one iterator."
        case .retryBudgetExhausted(let last):
            "The retry budget is spent, so the call was not retried; its last attempt ended: \(last.description)"
        case .circuitOpen(let origin, let retryAfter):
            "The circuit breaker of \(origin) is open after most recent calls failed, so nothing was sent; "
                + "try again in \(retryAfter.formattedMilliseconds)."
        case .shed(let origin, let reason):
            "The call to \(origin) was shed, and nothing was sent: \(reason)."
        }
    }

    /// `text` ending in exactly one period: the text of an underlying error often brings its own.
    private static func sentence(_ text: String) -> String {
        var text = Substring(text)
        while text.last == "." || text.last == " " { text = text.dropLast() }
        return text + "."
    }

    /// A decoding error as its own message and where in the document it happened, rather than the nested
    /// `dataCorrupted(Context(...))` dump that `DecodingError`'s description is.
    private static func describe(decoding error: any Error) -> String {
        let context: DecodingError.Context
        switch error as? DecodingError {
        case .dataCorrupted(let found)?: context = found
        case .keyNotFound(_, let found)?: context = found
        case .typeMismatch(_, let found)?: context = found
        case .valueNotFound(_, let found)?: context = found
        default: return "\(error)"
        }
        var text = Substring(context.debugDescription)
        while text.last == "." { text = text.dropLast() }
        let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return path.isEmpty ? String(text) : "\(text) (at \(path.hasPrefix(".") ? String(path.dropFirst()) : path))"
    }

    /// The same text as ``description``, for `localizedDescription`.
    public var errorDescription: String? { description }
}

extension Duration {
    /// The duration in seconds with millisecond precision, for messages: `"0.25 s"`. A duration past
    /// `saturationLimit` (a caller's `.seconds(Int64.max)`) is printed as a floating-point number rather than
    /// overflowing the millisecond count.
    var formattedSeconds: String {
        guard self == saturated else { return "\(timeInterval) s" }
        let milliseconds = components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
        let whole = milliseconds / 1000
        let fraction = milliseconds % 1000
        guard fraction != 0 else { return "\(whole) s" }
        var digits = String(fraction + 1000).dropFirst()
        while digits.last == "0" { digits = digits.dropLast() }
        return "\(whole).\(digits) s"
    }
}
