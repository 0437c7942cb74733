import Foundation

/// Who may receive a client's credentials and what counts as one, worked out once when the client is made.
///
/// The credential policy is the configured one plus what the client's own parts say: the names the
/// ``APIClient/Configuration/authorize`` closure writes (found by calling it once with a placeholder credential)
/// and the names adapters declare in ``RequestAdapter/variesOn``.
struct CredentialScope: Sendable {
    /// What counts as a credential in every request the client sends.
    let credentials: CredentialPolicy
    /// The base URL's origin and the configured trusted ones.
    let trustedOrigins: Set<Origin>
    /// The default headers without their credential fields: what a request to an untrusted origin gets.
    let untrustedHeaders: HeaderFields
    /// Header names whose values the coalescing key and the cache partition see, or that are declared irrelevant
    /// (``APIClient/Configuration/coalescingIgnoredHeaders``); an adapter that declares nothing may change these
    /// without making a call private.
    let keyedHeaders: Set<String>
    /// Whether the configuration lets credentials go over cleartext `http` to a host that is not loopback
    /// (``APIClient/Configuration/allowsCredentialsOverCleartext``).
    let allowsCleartext: Bool
    /// Whether a request to the base URL's origin carries what it carries in clear text to another machine, with no
    /// opt-in: worked out once, so a relative request with credentials is refused without parsing its URL.
    let baseIsExposed: Bool

    /// A placeholder that cannot be mistaken for a real token, for finding what `authorize` writes.
    static let probeToken = "courier-credential-probe"

    init(baseURL: URL, configuration: APIClient.Configuration) {
        var credentials = configuration.credentials
        let written = Self.namesWritten(by: configuration.authorize, baseURL: baseURL)
        credentials.headerNames.formUnion(written.headerNames)
        credentials.queryParameters.formUnion(written.queryParameters)
        for adapter in configuration.adapters { credentials.headerNames.formUnion(adapter.variesOn ?? []) }
        self.credentials = credentials
        trustedOrigins = Set(([baseURL] + configuration.trustedOrigins).compactMap(Origin.init))
        untrustedHeaders = credentials.removingCredentials(from: configuration.headers)
        keyedHeaders = credentials.headerNames.union(RequestKey.standardVaryingHeaders)
            .union(configuration.coalescingHeaders.map { $0.lowercased() })
            .union(configuration.coalescingIgnoredHeaders)
        allowsCleartext = configuration.allowsCredentialsOverCleartext
        baseIsExposed = !allowsCleartext && Cleartext.isExposed(baseURL)
    }

    /// Whether `url`'s origin may receive the client's credentials.
    func trusts(_ url: URL) -> Bool {
        Origin(url).map(trustedOrigins.contains) ?? false
    }

    /// Whether every header that differs between `before` and `after` is one the key or the partition sees.
    func changesOnlyKeyedHeaders(_ before: HeaderFields, _ after: HeaderFields) -> Bool {
        guard before != after else { return true }
        let names = Set(before.fields.map(\.canonicalName)).union(after.fields.map(\.canonicalName))
        return names.allSatisfy { name in
            keyedHeaders.contains(name) || before.values(for: name) == after.values(for: name)
        }
    }

    /// The lower-cased names of the fields that differ between `before` and `after`.
    static func changedNames(_ before: HeaderFields, _ after: HeaderFields) -> Set<String> {
        let names = Set(before.fields.map(\.canonicalName)).union(after.fields.map(\.canonicalName))
        return names.filter { before.values(for: $0) != after.values(for: $0) }
    }

    /// The header names and query parameters `authorize` writes into a request that had none.
    static func namesWritten(
        by authorize: (inout TransportRequest, Credential) -> Void, baseURL: URL
    ) -> CredentialPolicy {
        var probe = TransportRequest(url: baseURL, headers: [:])
        authorize(&probe, Credential(accessToken: probeToken, refreshToken: probeToken, identity: probeToken))
        let before = Set(Self.queryNames(of: baseURL))
        return CredentialPolicy(
            headerNames: Set(probe.headers.fields.map(\.canonicalName)),
            queryParameters: Set(queryNames(of: probe.url)).subtracting(before))
    }

    private static func queryNames(of url: URL) -> [String] {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.map(\.name) ?? []
    }
}

/// A request after the adapters ran once, before the cache and the coalescer see it.
struct Adapted: Sendable {
    /// The request as built, before adapters: what each retry adapts again.
    var unadapted: TransportRequest
    /// The request as the adapters returned it: what the cache matches `Vary` against, what the coalescing key is
    /// made of, and what the first attempt sends.
    var request: TransportRequest
    /// Whether an adapter that declared nothing changed a header the key and the cache cannot see: the call is then
    /// neither shared with other callers nor stored in or answered from the cache.
    var isPrivate = false
    /// The coalescing key of `request` without a partition, when it was built with the request (see
    /// ``RecentURLs/PlainGET``); `nil` after adapters.
    var sharingKey: RequestKey? = nil
    /// The header names the coalescing key ignores for this call, when adapters that declared `variesOn: []` changed
    /// some: the configured ignored names and theirs. `nil`, the common case, means the configured ones.
    var ignoredHeaders: Set<String>? = nil

    /// What a retry adapts again: the request as built, with the validator fields the cache added to `sent`.
    func retryBase(for sent: TransportRequest) -> TransportRequest {
        guard sent.headers != request.headers else { return unadapted }
        var base = unadapted
        for name in RequestKey.conditionalHeaders {
            if let value = sent.headers[name], !base.headers.contains(name) { base.headers[name] = value }
        }
        return base
    }
}
