import Foundation

/// What makes two requests "the same" for coalescing: they would get the same response.
///
/// A key is made of the method, the normalized URL (scheme and host lower-cased, default port dropped,
/// fragment removed), the values of the headers that change the representation (`Accept`,
/// `Accept-Encoding`, `Accept-Language`, `Range`, the conditional `If-*` fields, plus any configured names), the body bytes when there
/// is a body, and the credentials the request carries. Two users therefore never share a response:
/// requests with different `Authorization` or `Cookie` values get different keys.
///
/// The key's ``description`` never shows credential values.
public struct RequestKey: Hashable, Sendable, CustomStringConvertible {
    /// The header names whose values always take part in the key.
    public static let representationHeaders = ["accept", "accept-encoding", "accept-language", "range"]
    /// Conditional header names: a conditional request gets a different answer (such as `304`), so it never
    /// shares a flight with an unconditional one.
    static let conditionalHeaders = [
        "if-none-match", "if-modified-since", "if-match", "if-unmodified-since", "if-range",
    ]
    /// Credential headers: their values take part in the key but are never printed.
    static let credentialHeaders = ["authorization", "proxy-authorization", "cookie"]

    /// The request method.
    public let method: HTTPMethod
    /// The normalized URL.
    public let url: String
    /// `name: value` for each representation header present, in a fixed order.
    public let varyingHeaders: [String]
    /// The request body, when there is one.
    public let body: Data?
    /// An identity that partitions keys, such as a user id; `nil` when the request is anonymous.
    public let partition: String?
    /// The credential header values, compared but never printed.
    private let credentials: [String]

    /// Makes the key of a request.
    ///
    /// - Parameters:
    ///   - request: The request, as built before adapters run.
    ///   - extraHeaders: Header names, besides ``representationHeaders``, whose values distinguish requests.
    ///   - partition: An identity that partitions keys, such as the credential's identity.
    public init(_ request: HTTPRequest, varyingOn extraHeaders: [String] = [], partition: String? = nil) {
        method = request.method
        url = Self.normalize(request.url)
        let names = Self.representationHeaders + Self.conditionalHeaders + extraHeaders.map { $0.lowercased() }
        varyingHeaders = names.compactMap { name in request.headers[name].map { "\(name): \($0)" } }
        credentials = Self.credentialHeaders.compactMap { name in request.headers[name].map { "\(name): \($0)" } }
        body = request.body
        self.partition = partition
    }

    /// `METHOD url` and the varying headers; credentials are left out.
    public var description: String {
        ([method.rawValue + " " + url] + varyingHeaders).joined(separator: " | ")
    }

    /// Lower-cases the scheme and host, drops the default port and the fragment.
    static func normalize(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return url.absoluteString
        }
        let scheme = components.scheme?.lowercased()
        components.scheme = scheme
        components.host = components.host?.lowercased()
        if (scheme == "http" && components.port == 80) || (scheme == "https" && components.port == 443) {
            components.port = nil
        }
        components.fragment = nil
        return components.string ?? url.absoluteString
    }
}
