import Foundation

/// A fully built HTTP request, as it is handed to an ``HTTPTransport``.
///
/// ``APIClient`` turns a ``APIRequest`` into an `TransportRequest` (base URL, path, query, headers and encoded
/// body), runs the configured ``RequestAdapter``s on it before every attempt, and sends it.
/// Transports and adapters see only this value type.
public struct TransportRequest: Sendable, Hashable {
    /// The request method.
    public var method: RequestMethod {
        get { storage.fields.method }
        _modify { yield &uniqueStorage().fields.method }
    }
    /// The absolute URL of the target resource.
    public var url: URL {
        get { storage.url }
        _modify {
            let storage = uniqueStorage()
            storage.urlText = nil
            var url = storage.url
            defer { storage.fields.location = .url(url) }
            yield &url
        }
    }
    /// The header fields to send.
    public var headers: HeaderFields {
        get { storage.fields.headers }
        _modify { yield &uniqueStorage().fields.headers }
    }
    /// The body to send, or `nil` for none.
    public var body: Data? {
        get { storage.fields.body }
        _modify { yield &uniqueStorage().fields.body }
    }
    /// A body produced while it is sent (a file, a stream of chunks), sent instead of ``body`` when set.
    ///
    /// A transport that sends only buffered bodies reads it whole first; ``HTTPTransport/stream(_:)``'s default
    /// does that.
    public var streamedBody: StreamedBody? {
        get { storage.fields.streamedBody }
        _modify { yield &uniqueStorage().fields.streamedBody }
    }
    /// Which parts of this request are credentials: what its ``description`` and events redact, what
    /// partitions its cache entries and coalescing key, and what a transport strips when a redirect leads to
    /// another origin. ``APIClient`` sets its configured policy here; ``CredentialPolicy/standard`` by default.
    public var credentials: CredentialPolicy {
        get { storage.fields.credentials }
        _modify { yield &uniqueStorage().fields.credentials }
    }
    /// Which redirects the transport follows for this request; ``RedirectPolicy/default`` (follow up to 20) unless
    /// the client's or the request's policy says otherwise.
    public var redirectPolicy: RedirectPolicy {
        get { storage.fields.redirectPolicy }
        _modify { yield &uniqueStorage().fields.redirectPolicy }
    }

    /// The fields, behind one reference that copies share until one of them changes a field (copy on write).
    ///
    /// A request is copied into every step of a call (the plan, the flight, each attempt, the exchange every caller
    /// of a flight receives); as a plain struct each copy retained and released its seven fields one by one, a
    /// measurable share of a call (see `Scripts/instructions.sh`).
    private var storage: Storage

    /// Creates a request.
    ///
    /// - Parameters:
    ///   - method: The request method.
    ///   - url: The absolute URL of the target resource.
    ///   - headers: The header fields to send.
    ///   - body: The body to send, or `nil` for none.
    ///   - credentials: Which parts of the request are credentials.
    public init(
        method: RequestMethod = .get, url: URL, headers: HeaderFields = [:], body: Data? = nil,
        credentials: CredentialPolicy = .standard
    ) {
        storage = Storage(method: method, location: .url(url), headers: headers, body: body, credentials: credentials)
    }

    /// A request to the URL a client built, which is parsed only if something reads ``url`` (see
    /// ``RecentURLs/Entry``); its normalized text is kept as ``urlText``.
    init(
        method: RequestMethod, target: RecentURLs.Entry, headers: HeaderFields, body: Data?,
        credentials: CredentialPolicy
    ) {
        storage = Storage(
            method: method, location: .built(target), headers: headers, body: body, credentials: credentials)
        storage.urlText = target.text
    }

    /// A request to a URL the client built and has not seen lately (see ``URLBuilder/Target/firstSight(_:)``): kept
    /// as its normalized text, which is parsed only if something reads ``url``, and then once per request.
    init(
        method: RequestMethod, unparsed text: URLText, headers: HeaderFields, body: Data?,
        credentials: CredentialPolicy
    ) {
        storage = Storage(
            method: method, location: .text(text), headers: headers, body: body, credentials: credentials)
        storage.urlText = text
    }

    /// The URL as the cache and the coalescing key compare it (``RequestKey/normalize(_:)``): kept from when the
    /// client built the request, so that a call normalizes its URL once rather than at every lookup and key.
    var urlKey: String {
        storage.urlText?.text ?? RequestKey.normalize(url)
    }

    /// ``urlKey`` with its hash, which the cache's index is keyed by.
    var urlText: URLText {
        storage.urlText ?? URLText(RequestKey.normalize(url))
    }

    /// ``urlText`` when the request knows it already (the client built it), `nil` when it would be computed.
    var knownURLText: URLText? { storage.urlText }

    /// The request's storage as one reference, for a ``RequestKey`` that keys the request by itself: copies of the key
    /// then share the request, and a copy is a retain.
    var keyReference: any AnyObject & Sendable { storage }

    /// The request whose storage is `reference`, a ``keyReference``.
    init(keyReference reference: any AnyObject & Sendable) {
        storage = Self.storage(keyReference: reference)
    }

    /// The hash of a request a ``RequestKey`` keys by itself (it has no header, body or partition): the hash its URL
    /// text carries, mixed with the method's length. Read in place from the storage: through ``method`` and
    /// ``urlText`` each read copied the request's fields and its text, about 170 instructions per hash of a key.
    /// Equal methods have equal lengths, so equal requests hash alike.
    static func methodAndURLHash(ofKeyReference reference: any AnyObject & Sendable) -> Int {
        let storage = storage(keyReference: reference)
        let urlHash = storage.urlText?.precomputedHash ?? URLText(RequestKey.normalize(storage.url)).precomputedHash
        return urlHash ^ (storage.fields.method.rawValue.utf8.count &* 0x1E37_79B9_7F4A_7C15)
    }

    /// The storage a ``keyReference`` is: a key hands back only what it was given.
    private static func storage(keyReference reference: any AnyObject & Sendable) -> Storage {
        unsafeDowncast(reference, to: Storage.self)
    }

    /// Keeps `text` as this request's ``urlText``; it must be the normalized form of ``url``.
    mutating func keepURLText(_ text: URLText) {
        uniqueStorage().urlText = text
    }

    /// Whether both are copies of one request, unchanged since: then they are equal without comparing a field.
    func sharesStorage(with other: TransportRequest) -> Bool {
        storage === other.storage
    }

    /// The storage, copied first when another request shares it.
    private mutating func uniqueStorage() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    /// Requests are equal when every field is.
    public static func == (lhs: TransportRequest, rhs: TransportRequest) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.fields == rhs.storage.fields
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage.fields)
    }
}

extension TransportRequest {
    /// The fields of a ``TransportRequest``. Changed only through a request that holds the sole reference, which is
    /// what makes sharing it across tasks safe.
    fileprivate final class Storage: @unchecked Sendable {
        struct Fields: Hashable {
            var method: RequestMethod
            var location: Location
            var headers: HeaderFields
            var body: Data?
            var streamedBody: StreamedBody?
            var credentials: CredentialPolicy
            var redirectPolicy: RedirectPolicy = .default
        }

        // Unchecked: the storage is changed only through `uniqueStorage()`, by its sole owner, so two accesses can
        // never overlap; the run-time check cost about 80 instructions on every read of a field.
        @exclusivity(unchecked) var fields: Fields
        /// The normalized URL, when known; not a field (equal requests may or may not know it). Cleared whenever
        /// the URL changes.
        @exclusivity(unchecked) var urlText: URLText?
        /// The URL a ``Location/text(_:)`` location was parsed into, once something read it. Under a lock: requests
        /// that share this storage may be read from several tasks at once.
        private let parsed: InlineLock<URL?>

        init(
            method: RequestMethod, location: Location, headers: HeaderFields, body: Data?, credentials: CredentialPolicy
        ) {
            fields = Fields(method: method, location: location, headers: headers, body: body, credentials: credentials)
            parsed = InlineLock(nil)
        }

        private init(fields: Fields, urlText: URLText?, parsed: URL?) {
            self.fields = fields
            self.urlText = urlText
            self.parsed = InlineLock(parsed)
        }

        func copy() -> Storage {
            Storage(fields: fields, urlText: urlText, parsed: parsed.withLock { $0 })
        }

        /// The URL, parsed now if it was kept as text.
        var url: URL {
            guard case .text(let text) = fields.location else { return fields.location.url }
            return parsed.withLock { parsed in
                if let parsed { return parsed }
                let url = Location.parse(text)
                parsed = url
                return url
            }
        }
    }
}

extension TransportRequest: CustomStringConvertible, CustomReflectable {
    /// `METHOD url`, with no headers or body, and the URL's credentials (secret query values, password)
    /// shown as `<redacted>`.
    public var description: String {
        "\(method) \(Redaction(credentials).redact(url))"
    }

    /// The method, the redacted URL, the headers with credential values redacted, and the body's size:
    /// `dump` and reflection-based loggers never show a credential.
    public var customMirror: Mirror {
        let redaction = Redaction(credentials)
        return Mirror(
            self,
            children: [
                "method": method.rawValue,
                "url": redaction.redact(url),
                "headers": redaction.redact(headers),
                "body": streamedBody.map { body in body.length.map { "streamed, \($0) bytes" } ?? "streamed" }
                    ?? body.map { "\($0.count) bytes" } ?? "none",
            ],
            displayStyle: .struct)
    }
}

extension TransportRequest {
    /// Where a request's URL comes from: a `URL` as given, or the entry of a URL the client built, parsed only when
    /// read. Equal when the URLs are.
    fileprivate enum Location: Hashable {
        case url(URL)
        case built(RecentURLs.Entry)
        /// The normalized text of a URL the client built, valid by construction, parsed when read (see
        /// ``Storage/url``, which keeps what it parsed).
        case text(URLText)

        /// The URL; for ``text(_:)``, parsed again on each read (``Storage/url`` parses once).
        var url: URL {
            switch self {
            case .url(let url): url
            case .built(let entry): entry.url
            case .text(let text): Self.parse(text)
            }
        }

        /// The normalized text, when the location was built from it.
        private var text: URLText? {
            switch self {
            case .url: nil
            case .built(let entry): entry.text
            case .text(let text): text
            }
        }

        /// The URL `text` names: it was written from parts that each parse (see ``URLBuilder/Target``); the fallback
        /// only keeps a mistake there from trapping.
        static func parse(_ text: URLText) -> URL {
            URL(string: text.text) ?? URL(fileURLWithPath: "/")
        }

        static func == (lhs: Location, rhs: Location) -> Bool {
            if let left = lhs.text, let right = rhs.text, left == right { return true }
            return lhs.url == rhs.url
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(url)
        }
    }
}
