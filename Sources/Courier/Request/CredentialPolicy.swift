import Foundation

/// What counts as a credential in a request: the one list behind every rule Courier keeps about secrets.
///
/// A credential is anything that says who the caller is: the values of the header fields named in
/// ``headerNames``, the values of the query parameters named in ``queryParameters``, and the user information
/// of a URL (`https://user:password@host`, always). The same policy
/// - partitions the ``ResponseCache`` and enters the coalescing ``RequestKey``, so two callers whose credentials
///   differ never share a stored or an in-flight response;
/// - is redacted (`<redacted>`) in every event, error, `description` and `dump`;
/// - is stripped from a request that a redirect sends to another origin.
///
/// A name is therefore never secret for one of these and not for another. ``APIClient`` adds the header names
/// its ``APIClient/Configuration/authorize`` closure writes, and ``RequestAdapter/variesOn`` names, to the
/// policy of the requests it sends.
///
/// ```swift
/// var configuration = APIClient.Configuration()
/// configuration.credentials.headerNames.insert("x-tenant-secret")
/// configuration.credentials.queryParameters.insert("session")
/// ```
public struct CredentialPolicy: Sendable, Hashable {
    /// Lower-cased header field names whose values are credentials. ``standard`` lists the defaults.
    public var headerNames: Set<String> {
        didSet {
            headerNames = Set(headerNames.map { $0.lowercased() })
            headerNameFilter = NameFilter(headerNames)
        }
    }
    /// ``headerNames`` as a filter that rules most other names out without hashing them (see ``NameFilter``).
    private(set) var headerNameFilter: NameFilter
    /// Lower-cased query parameter names whose values are credentials, compared ignoring percent-encoding.
    public var queryParameters: Set<String> {
        didSet { queryParameters = Set(queryParameters.map { $0.lowercased() }) }
    }

    /// Header fields that carry credentials in common APIs: `Authorization`, `Proxy-Authorization`, `Cookie`,
    /// `Set-Cookie` (a credential the server hands out), `X-API-Key`, `API-Key`, `X-Auth-Token` and
    /// `X-Access-Token`.
    public static let standardHeaderNames: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "x-auth-token",
        "x-access-token",
    ]

    /// Query parameters that carry secrets in common APIs: `access_token`, `api_key`, `apikey`, `client_secret`,
    /// `code`, `id_token`, `key`, `password`, `refresh_token`, `secret`, `sig`, `signature` and `token`.
    public static let standardQueryParameters: Set<String> = [
        "access_token", "api_key", "apikey", "client_secret", "code", "id_token", "key", "password", "refresh_token",
        "secret", "sig", "signature", "token",
    ]

    /// The standard header names and query parameters; what a value printed on its own (an ``HeaderFields``,
    /// an ``APIError``) is redacted with.
    public static let standard = CredentialPolicy(
        headerNames: standardHeaderNames, queryParameters: standardQueryParameters)

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - headerNames: Header field names whose values are credentials, in any case.
    ///   - queryParameters: Query parameter names whose values are credentials, in any case.
    public init(headerNames: Set<String>, queryParameters: Set<String>) {
        let lowercased = Set(headerNames.map { $0.lowercased() })
        self.headerNames = lowercased
        headerNameFilter = NameFilter(lowercased)
        self.queryParameters = Set(queryParameters.map { $0.lowercased() })
    }

    /// Whether the field named `name` carries a credential.
    ///
    /// - Parameter name: A header field name, in any case.
    public func isCredential(headerNamed name: String) -> Bool {
        headerNames.contains(name.lowercased())
    }

    /// Whether `canonicalName` (lower case) is one of ``headerNames``: hashed only when the filter lets it through,
    /// which for most fields of a response (`Date`, `ETag`, `Content-Type`) it does not.
    @inline(__always)
    func contains(canonicalName: String) -> Bool {
        headerNameFilter.mayContain(canonicalName) && headerNames.contains(canonicalName)
    }

    /// The credential fields of `headers` as `name: value` lines, in order: what keys and partitions compare.
    func credentialLines(of headers: HeaderFields) -> [String] {
        headers.fields.compactMap { field in
            contains(canonicalName: field.canonicalName) ? field.canonicalName + ": " + field.value : nil
        }
    }

    /// `headers` without any credential field.
    func removingCredentials(from headers: HeaderFields) -> HeaderFields {
        HeaderFields(fields: headers.fields.filter { !contains(canonicalName: $0.canonicalName) })
    }

    /// A one-word Bloom filter of lower-case header names: a name whose bit is clear is certainly not in the set, so
    /// checking a field against a policy hashes the name (a few hundred instructions) only when its bit is set. A
    /// name's bit comes from its length and its first and last bytes, which costs a few instructions; the weights
    /// are chosen so that none of some sixty common response fields shares a bit with the standard names, and a
    /// name that does (or a policy with many names) is still answered exactly, by the set.
    struct NameFilter: Sendable, Hashable {
        private var bits: UInt64 = 0

        init(_ names: Set<String>) {
            for name in names { bits |= Self.bit(name) }
        }

        @inline(__always)
        func mayContain(_ name: String) -> Bool { bits & Self.bit(name) != 0 }

        @inline(__always)
        private static func bit(_ name: String) -> UInt64 {
            // Through the contiguous bytes: `utf8.last` walks string indices, several times the cost of the rest.
            if let bit = name.utf8.withContiguousStorageIfAvailable(bit(_:)) { return bit }
            var copy = name
            return copy.withUTF8(bit(_:))
        }

        @inline(__always)
        private static func bit(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
            guard let first = bytes.first, let last = bytes.last else { return 1 }
            let mixed = UInt64(truncatingIfNeeded: bytes.count) &* 27 &+ UInt64(first) &* 25 &+ UInt64(last) &* 4
            return 1 &<< (mixed & 63)
        }
    }
}

extension CredentialPolicy {
    /// Words that credential header names are made of. What a client adds to its policy is, in practice, built from
    /// them: API keys (`X-Goog-Api-Key`, `Ocp-Apim-Subscription-Key`), tokens (`X-Amz-Security-Token`,
    /// `X-CSRF-Token`), secrets, passwords, sessions, signatures; and what `authorize` writes is usually one of the
    /// standard names or contains `auth`.
    private static let credentialWords = [
        "auth", "token", "secret", "password", "passwd", "credential", "session", "cookie", "signature", "key",
    ]

    /// Whether the field named `canonicalName` (lower case) may carry a credential for some client: what a value
    /// printed without its client's policy (``HeaderFields/description``) hides.
    ///
    /// A policy matches exact names, and a description cannot see the client's, so it errs the other way: a
    /// standard name, or a name containing a word from ``credentialWords``. Hiding a value that was not secret costs
    /// a line of a log; showing one that was cannot be undone. `Idempotency-Key` is the one common exception: its
    /// value is a request identifier that is worth seeing.
    static func mayBeCredential(headerNamed canonicalName: String) -> Bool {
        if standardHeaderNames.contains(canonicalName) { return true }
        guard canonicalName != "idempotency-key" else { return false }
        return credentialWords.contains { canonicalName.contains($0) }
    }
}
