#if OpenAPI
    import Courier
    import Foundation

    /// The three parts of a URL that HTTPTypes keeps as pseudo-header fields (`:scheme`, `:authority`, `:path`),
    /// split from and joined back into a `URL` without re-encoding anything, so a round trip gives back the same text.
    struct RequestTarget: Equatable {
        /// `http` or `https`, lower-cased.
        var scheme: String
        /// Host and optional port, as written: `example.com:8443`, `[::1]`.
        var authority: String
        /// The path and query, percent-encoded as in the URL; at least `/`.
        var path: String

        /// Splits an absolute `http(s)` URL. The fragment is dropped: it is never sent.
        ///
        /// - Throws: ``APIError/invalidRequest(_:)`` for another scheme, a missing host, or user information, which
        ///   an `:authority` may not carry (RFC 9113 §8.3.1) and which would otherwise be lost silently.
        init(_ url: URL) throws(APIError) {
            let text = url.absoluteString
            guard let separator = text.range(of: "://") else { throw .invalidRequest(.invalidURL(text)) }
            let scheme = text[..<separator.lowerBound].lowercased()
            guard scheme == "http" || scheme == "https" else { throw .invalidRequest(.invalidURL(text)) }
            let rest = text[separator.upperBound...]
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
            let authority = String(rest[..<authorityEnd])
            guard !authority.isEmpty, !authority.contains("@") else { throw .invalidRequest(.invalidURL(text)) }
            var path = String(rest[authorityEnd...].prefix { $0 != "#" })
            if !path.hasPrefix("/") { path = "/" + path }
            self.init(scheme: scheme, authority: authority, path: path)
        }

        init(scheme: String, authority: String, path: String) {
            self.scheme = scheme
            self.authority = authority
            self.path = path
        }

        /// Reads the pseudo-header fields of an HTTPTypes request.
        ///
        /// - Throws: ``APIError/invalidRequest(_:)`` when one is missing or cannot be part of an `http(s)` URL: the
        ///   asterisk form (`OPTIONS *`) and the authority form of `CONNECT` have no URL.
        init(scheme: String?, authority: String?, path: String?) throws(APIError) {
            let shown = "\(scheme ?? "")://\(authority ?? "")\(path ?? "")"
            guard let scheme = scheme?.lowercased(), scheme == "http" || scheme == "https",
                let authority, !authority.isEmpty,
                authority.allSatisfy({ !"/?#@".contains($0) && !$0.isWhitespace })
            else { throw .invalidRequest(.invalidURL(shown)) }
            guard let path, path.hasPrefix("/") else {
                throw .invalidRequest(
                    .invalidPath(path ?? "", problem: "is not an absolute path (it must start with /)"))
            }
            guard !path.contains("#") else {
                throw .invalidRequest(.invalidPath(path, problem: "contains a fragment, which is never sent"))
            }
            self.init(scheme: scheme, authority: authority, path: path)
        }

        /// The URL these parts make, exactly: a part Foundation would have to re-encode is refused.
        ///
        /// - Throws: ``APIError/invalidRequest(_:)`` when the text is not a URL as it stands.
        func url() throws(APIError) -> URL {
            let text = "\(scheme)://\(authority)\(path)"
            guard let url = URL(string: text), url.absoluteString == text, url.host != nil else {
                throw .invalidRequest(.invalidURL(text))
            }
            return url
        }
    }
#endif
