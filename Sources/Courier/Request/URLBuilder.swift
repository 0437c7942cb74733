import Foundation

/// Builds the absolute URL of a ``APIRequest``: relative paths are appended to the base URL's path, absolute
/// URLs are used as given, and query items are percent-encoded per RFC 3986.
///
/// A base URL may carry a query (`https://api.example.com/v1?tenant=acme`): the path goes before it and the queries
/// are merged, the base's first, then the path's own, then the request's items:
/// `/users/42?page=2` → `https://api.example.com/v1/users/42?tenant=acme&page=2`.
enum URLBuilder {
    /// - Parameters:
    ///   - base: The client's base URL, split once (see ``Base``).
    ///   - path: A path relative to the base, or an absolute URL.
    ///   - query: Query items to append.
    ///   - recent: The client's recently built URLs, so that a URL built before is not parsed again.
    static func url(base: Base, path: String, query: [URLQueryItem], recent: RecentURLs? = nil) throws(APIError)
        -> URL
    {
        try target(base: base, path: path, query: query, recent: recent).entry.url
    }

    /// ``url(base:path:query:recent:)`` with its normalized text, which `recent` keeps beside the URL, and whether
    /// `recent` knew the URL already.
    static func target(base: Base, path: String, query: [URLQueryItem], recent: RecentURLs?) throws(APIError)
        -> (entry: RecentURLs.Entry, isKnown: Bool)
    {
        switch try resolve(base: base, path: path, query: query, recent: recent) {
        case .entry(let entry, let isKnown): (entry, isKnown)
        case .firstSight(let text): (RecentURLs.Entry(unparsed: text, key: .text(text)), false)
        }
    }

    /// A URL as ``resolve(base:path:query:recent:)`` finds or builds it.
    enum Target {
        /// The entry `recent` keeps for the URL; `isKnown` when it kept it before this call.
        case entry(RecentURLs.Entry, isKnown: Bool)
        /// A URL with query items that `recent` has not seen lately, built on a base in normal form (so valid and in
        /// normal form by construction), and not kept: a client that calls ever-new URLs (`?key=N`) would otherwise
        /// allocate an entry and fill the table for nothing, about 1,500 instructions and an allocation per call. The
        /// URL is kept from its second call (see ``RecentURLs/sighting(of:)``).
        case firstSight(URLText)
    }

    /// Finds the URL `recent` keeps for `path` and `query`, or builds it (see ``Target``).
    static func resolve(base: Base, path: String, query: [URLQueryItem], recent: RecentURLs?) throws(APIError)
        -> Target
    {
        if query.isEmpty, let known = recent?.url(forPath: path) { return .entry(known, isKnown: true) }
        let (text, isAbsolute) = try resolvedTarget(base: base, path: path, query: query)
        // The text's hash is computed once, here: for the lookup, the entry's key and its normalized text.
        let textKey = query.isEmpty ? nil : URLText(text)
        let isBuiltInNormalForm = !isAbsolute && base.isNormalized
        if let textKey, let recent {
            switch recent.sighting(of: textKey) {
            case .kept(let known): return .entry(known, isKnown: true)
            case .new where isBuiltInNormalForm: return .firstSight(textKey)
            case .new, .seenBefore: break
            }
        }
        let key = textKey.map(RecentURLs.Key.text) ?? .path(path)
        // A URL built on a base already in normal form is in normal form too (a path and a query are never
        // normalized, and neither may carry a fragment): its text is its key, with no pass over its bytes. It is
        // also valid by construction (the base parsed, the path is escaped, the items encoded), so it is parsed only
        // when something reads it as a `URL` (see ``RecentURLs/Entry``).
        if isBuiltInNormalForm {
            let entry = RecentURLs.Entry(unparsed: textKey ?? URLText(text), key: key)
            recent?.remember(entry)
            return .entry(entry, isKnown: false)
        }
        guard let url = URL(string: text), !isAbsolute || url.host != nil else {
            throw .invalidRequest(.invalidURL(text))
        }
        let entry = RecentURLs.Entry(url, key: key)
        recent?.remember(entry)
        return .entry(entry, isKnown: false)
    }

    /// A base URL as every request's URL is built from it, split once per client.
    struct Base: Sendable {
        /// The text up to the end of the path, without the path's trailing slashes and without a fragment (which is
        /// never sent).
        let path: String
        /// The base URL's query without its `?`, or `nil` when it has none (or an empty one).
        let query: String?
        /// Whether ``path`` is in the form ``RequestKey/normalize(_:)`` gives it (scheme and host in lower case, no
        /// default port), as nearly every base URL is.
        let isNormalized: Bool

        /// The whole base: ``path``, then `?` and ``query`` when there is one.
        var text: String { query.map { path + "?" + $0 } ?? path }

        init(_ base: URL) {
            var text = base.absoluteString
            if let hash = text.firstIndex(of: "#") { text = String(text[..<hash]) }
            let query = text.firstIndex(of: "?").map { String(text[text.index(after: $0)...]) }
            if let query { text.removeLast(query.utf8.count + 1) }
            while text.hasSuffix("/") { text.removeLast() }
            path = text
            self.query = query?.isEmpty == false ? query : nil
            isNormalized = URL(string: text).map { RequestKey.normalize($0) == text } ?? false
        }
    }

    /// The whole URL text, query items included: the absolute URL, or base + path, then the items.
    private static func resolvedTarget(base: Base, path: String, query: [URLQueryItem]) throws(APIError)
        -> (text: String, isAbsolute: Bool)
    {
        switch scheme(of: path) {
        case "http"?, "https"?:
            guard let url = URL(string: path), url.host?.isEmpty == false, url.fragment == nil else {
                throw .invalidRequest(.invalidURL(path))
            }
            return (URLComposer.joined(path, query: query), true)
        case _?:
            throw .invalidRequest(.invalidURL(path))
        case nil:
            break
        }
        let escaped = try escapePath(path)
        guard !escaped.isEmpty else { return (URLComposer.joined(base.text, query: query), false) }
        let first = escaped.utf8.first
        let needsSeparator = first != UInt8(ascii: "/") && first != UInt8(ascii: "?")
        // The common case, a base without a query: base, path and items written into one string's storage.
        guard let baseQuery = base.query else {
            return (URLComposer.joined(base.path, needsSeparator ? "/" : "", escaped, query: query), false)
        }
        let joined = base.path + (needsSeparator ? "/" : "") + escaped
        // The path goes before the base's query; the path's own query follows the base's.
        guard let (path, pathQuery) = split(joined) else {
            return (URLComposer.joined(joined + "?" + baseQuery, query: query), false)
        }
        let text = path + "?" + baseQuery + (pathQuery.isEmpty ? "" : "&" + pathQuery)
        return (URLComposer.joined(text, query: query), false)
    }

    /// `text` split at its first `?` into what comes before and the query after it; `nil` without a `?`.
    private static func split(_ text: String) -> (String, String)? {
        guard let mark = text.utf8.firstIndex(of: UInt8(ascii: "?")) else { return nil }
        return (String(text[..<mark]), String(text[text.utf8.index(after: mark)...]))
    }

    /// Whether `path` is an absolute URL rather than a path relative to the base URL.
    static func isAbsolute(_ path: String) -> Bool {
        scheme(of: path) != nil
    }

    /// The lower-cased scheme when `text` starts like an absolute URL (`scheme "://"`, RFC 3986 §3.1), else `nil`.
    private static func scheme(of text: String) -> String? {
        let bytes = text.utf8
        // Stops at the first byte that cannot be in a scheme: a relative path ("/users/42") ends at its first byte
        // instead of being searched to its end for a colon.
        guard let first = bytes.first, ByteSet.letters.contains(first) else { return nil }
        var colon = bytes.index(after: bytes.startIndex)
        while colon != bytes.endIndex, ByteSet.schemeCharacters.contains(bytes[colon]) {
            bytes.formIndex(after: &colon)
        }
        guard colon != bytes.endIndex, bytes[colon...].starts(with: "://".utf8) else { return nil }
        return String(decoding: bytes[..<colon], as: UTF8.self).lowercased()
    }

    /// Percent-encodes what a path cannot carry literally and rejects what it must never carry.
    static func escapePath(_ path: String) throws(APIError) -> String {
        // The common case, a clean ASCII path, is returned as it is, without copying.
        // Over the bytes of a copy (a retain): `withUTF8` lends a small string's bytes too, where stepping through
        // `utf8` cost about 50 instructions a byte.
        var copy = path
        let isClean = copy.withUTF8 { bytes in
            for byte in bytes where !ByteSet.urlTarget.contains(byte) || byte == UInt8(ascii: "%") { return false }
            return true
        }
        if isClean { return path }
        var output = [UInt8]()
        output.reserveCapacity(path.utf8.count)
        let bytes = Array(path.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case 0x00..<0x20, 0x7F:
                throw .invalidRequest(.invalidPath(path, problem: "contains a control character"))
            case UInt8(ascii: "#"):
                throw .invalidRequest(.invalidPath(path, problem: "contains a fragment (#), which is never sent"))
            case UInt8(ascii: "%"):
                guard index + 2 < bytes.count, isHex(bytes[index + 1]), isHex(bytes[index + 2]) else {
                    throw .invalidRequest(.invalidPath(path, problem: "contains a \"%\" that starts no valid escape"))
                }
                output.append(byte)
            case _ where ByteSet.urlTarget.contains(byte):
                output.append(byte)
            default:
                output += [UInt8(ascii: "%"), URLComposer.hexDigit(byte >> 4), URLComposer.hexDigit(byte & 0x0F)]
            }
            index += 1
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"):
            true
        default: false
        }
    }
}
