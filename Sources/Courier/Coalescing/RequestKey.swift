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
    /// Representation and conditional headers together, built once rather than on every request.
    static let standardVaryingHeaders = representationHeaders + conditionalHeaders
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
        let standard = Self.standardVaryingHeaders
        let names = extraHeaders.isEmpty ? standard : standard + extraHeaders.map { $0.lowercased() }
        varyingHeaders = names.compactMap { name in
            request.headers.value(canonicalName: name).map { "\(name): \($0)" }
        }
        credentials = Self.credentialHeaders.compactMap { name in
            request.headers.value(canonicalName: name).map { "\(name): \($0)" }
        }
        body = request.body
        self.partition = partition
    }

    /// `METHOD url` and the varying headers; credentials are left out.
    public var description: String {
        ([method.rawValue + " " + url] + varyingHeaders).joined(separator: " | ")
    }

    /// Lower-cases the scheme and host, drops the default port and the fragment.
    ///
    /// Works on the URL's bytes rather than through `URLComponents` (which parses the whole URL again) or
    /// Foundation's string search, and returns the text untouched in the common case where it is already
    /// normal: both showed up as the main cost of joining a flight.
    static func normalize(_ url: URL) -> String {
        let text = url.absoluteString
        let bytes = text.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
            bytes[colon...].starts(with: "://".utf8)
        else { return text }
        let authorityStart = bytes.index(colon, offsetBy: 3)
        let authorityEnd =
            bytes[authorityStart...].firstIndex {
                $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
            }
            ?? bytes.endIndex
        let scheme = bytes[..<colon]
        let authority = bytes[authorityStart..<authorityEnd]
        let hasUppercase = scheme.contains(where: isUppercase) || authority.contains(where: isUppercase)
        let lowerScheme = hasUppercase ? String(decoding: scheme, as: UTF8.self).lowercased() : String(text[..<colon])
        let defaultPort = lowerScheme == "http" ? ":80" : lowerScheme == "https" ? ":443" : nil
        let hasDefaultPort = defaultPort.map { authority.reversed().starts(with: $0.utf8.reversed()) } ?? false
        let fragment = bytes[authorityEnd...].firstIndex(of: UInt8(ascii: "#"))
        guard hasUppercase || hasDefaultPort || fragment != nil else { return text }
        var host = String(decoding: authority, as: UTF8.self).lowercased()
        if hasDefaultPort, let defaultPort { host.removeLast(defaultPort.count) }
        let rest = String(decoding: bytes[authorityEnd..<(fragment ?? bytes.endIndex)], as: UTF8.self)
        return lowerScheme + "://" + host + rest
    }

    private static func isUppercase(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")
    }
}
