import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Redaction {
    /// `error` with the credentials inside it redacted: the URL and path texts ``APIError`` carries, and the URLs a
    /// wrapped `URLError` keeps in its user info (which `dump` and `localizedDescription` show). The error's case,
    /// the `URLError`'s code and every response stay as they were, so callers can still act on them. Errors of
    /// other types (an adapter's own) are passed through.
    func sanitized(_ error: any Error) -> any Error {
        guard let apiError = error as? APIError else { return error }
        switch apiError {
        case .invalidRequest(.invalidURL(let text)):
            return APIError.invalidRequest(.invalidURL(redact(text)))
        case .invalidRequest(.invalidPath(let path, let problem)):
            return APIError.invalidRequest(.invalidPath(redact(path), problem: problem))
        case .notCached(let url):
            return APIError.notCached(redactedURL(url))
        case .transport(let failure, let underlying):
            return APIError.transport(failure, underlying: sanitized(underlying: underlying))
        case .invalidResponse(let reason, let underlying?):
            return APIError.invalidResponse(reason: redact(reason), underlying: sanitized(underlying: underlying))
        case .unacceptableStatus(let response):
            return APIError.unacceptableStatus(sanitized(response))
        case .unauthorized(let response):
            return APIError.unauthorized(sanitized(response))
        case .decodingFailed(let type, let underlying, let response):
            return APIError.decodingFailed(type: type, underlying: underlying, response: sanitized(response))
        default:
            return apiError
        }
    }

    /// A response an error carries, with the URL it came from redacted (a redirect's target may carry a credential in
    /// its query, as the request's own URL may).
    private func sanitized(_ response: TransportResponse) -> TransportResponse {
        guard let url = response.url else { return response }
        var response = response
        response.url = redactedURL(url)
        return response
    }

    /// A `URLError` rebuilt with its code and redacted URLs; any other error as it is.
    private func sanitized(underlying error: any Error) -> any Error {
        guard let urlError = error as? URLError else { return error }
        var info: [String: Any] = [:]
        for (key, value) in urlError.userInfo {
            switch value {
            case let url as URL: info[key] = redactedURL(url)
            case let text as String: info[key] = redact(text)
            case let nested as URLError: info[key] = sanitized(underlying: nested)
            case is NSError: continue  // an opaque cause may hold the URL in its own user info
            default: info[key] = value
            }
        }
        return URLError(urlError.code, userInfo: info)
    }

    /// `url` with its credentials redacted, still a `URL`: the placeholder is percent-encoded, and a URL that cannot
    /// be rebuilt loses its query and user information rather than keep a secret.
    func redactedURL(_ url: URL) -> URL {
        let text = redact(url)
        guard text != url.absoluteString else { return url }
        let encoded = text.replacingOccurrences(of: Self.placeholder, with: "%3Credacted%3E")
        if let redacted = URL(string: encoded) { return redacted }
        var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        components?.query = nil
        components?.user = nil
        components?.password = nil
        return components?.url ?? URL(fileURLWithPath: "/")
    }
}
