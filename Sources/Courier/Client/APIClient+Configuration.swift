import Foundation

extension APIClient {
    /// Everything an ``APIClient`` is configured with. Only the transport has no default.
    ///
    /// ```swift
    /// var configuration = APIClient.Configuration(transport: URLSessionTransport())
    /// configuration.retryPolicy = .never
    /// configuration.headers["User-Agent"] = "my-service/1.0"
    /// let client = APIClient(baseURL: URL(string: "https://api.example.com")!, configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// Sends requests. ``URLSessionTransport`` by default.
        public var transport: any HTTPTransport
        /// The private HTTP cache (RFC 9111) answering `GET` requests, or `nil` for none. A fresh
        /// ``ResponseCache`` by default.
        ///
        /// On by default because honouring the server's `Cache-Control` is what a private HTTP client is expected
        /// to do, and it is safe for a client shared by many users: entries are partitioned by the request's
        /// credentials (and the authenticator's identity), and a response whose credentials an adapter added
        /// after the lookup is not stored. Responses without freshness or validators are not kept at all.
        ///
        /// - Important: The cache is an actor instance: copies of a configuration, and every client made from
        ///   them, share it. Give each client its own ``ResponseCache`` if they must not share, or set `nil`.
        public var cache: ResponseCache?
        /// How long a stored response that names no lifetime (no `max-age`, no `Expires`) stays fresh; `nil`, the
        /// default, leaves that to RFC 9111's heuristic. A common need: keep an answer five minutes when the
        /// server says nothing. It never overrides `no-store`, `no-cache` or `must-revalidate`, and applies only to
        /// status codes a heuristic could apply to. ``APIRequest/defaultFreshness`` overrides it per request.
        public var defaultFreshness: Duration? = nil
        /// Decides whether failed attempts are sent again. ``RetryPolicy/default`` by default.
        public var retryPolicy: RetryPolicy
        /// Run in order on every attempt, before the request is sent. The first attempt's run happens before the
        /// cache and the coalescer see the request, so what adapters add is matched by `Vary` and enters the key;
        /// see ``RequestAdapter/variesOn`` for what makes a call private.
        public var adapters: [any RequestAdapter]
        /// Provides and renews the credential of requests that ``APIRequest/requiresAuthentication``.
        /// `nil` (the default) sends every request without authorization.
        ///
        /// With an authenticator, each attempt carries its current credential (applied by ``authorize``
        /// after the adapters ran); a `401` triggers one refresh and one resend. Requests of different
        /// credential identities never share an in-flight request. The credential goes only to the base URL's
        /// origin and to ``trustedOrigins``.
        public var authenticator: TokenRefresher?
        /// Applies a credential to a request, after the adapters ran. Sets
        /// `Authorization: Bearer <access token>` by default.
        ///
        /// The header names and query parameters it writes are credentials: the client finds them by calling it
        /// once with a placeholder credential when it is created, and adds them to ``credentials``, so a token
        /// written to `X-Auth-Token` or `?access_token=` is redacted and partitioned like `Authorization`.
        public var authorize: @Sendable (inout TransportRequest, Credential) -> Void
        /// What counts as a credential: the header names and query parameters (URL user information always
        /// counts). One list drives cache partitioning, the coalescing key, redaction in events, errors and
        /// descriptions, and what a cross-origin redirect strips. ``CredentialPolicy/standard`` by default.
        public var credentials: CredentialPolicy
        /// Origins besides the base URL's that may receive credentials: the authenticator's credential and the
        /// credential fields of ``headers``. Give a URL per origin (`https://uploads.example.com`); only its
        /// scheme, host and port count. Empty by default.
        ///
        /// A request to any other origin goes without them unless it sets
        /// ``APIRequest/sendsCredentialsToAnyOrigin``; credentials the request carries itself (its own headers,
        /// query or user information) are sent as given.
        public var trustedOrigins: [URL]
        /// Whether credentials may be sent over cleartext `http://` to a host that is not loopback. `false` by
        /// default.
        ///
        /// A credential is the authenticator's token, a header or query parameter that ``credentials`` names, or a
        /// URL's user information. Over plain `http` anyone on the path can read it and use it, so by default a
        /// request that would carry one to a non-loopback `http://` URL fails with ``APIError/invalidRequest(_:)``
        /// (``InvalidRequestReason/credentialsOverCleartext(host:)``) and nothing is sent. Loopback (`127.0.0.0/8`,
        /// `::1`, `localhost`) never leaves the machine and is always allowed. Set `true` only where the network
        /// itself is trusted, such as a sidecar or a service mesh that adds TLS:
        ///
        /// ```swift
        /// var configuration = APIClient.Configuration()
        /// configuration.allowsCredentialsOverCleartext = true  // the mesh's sidecar encrypts the hop
        /// ```
        ///
        /// Requests without credentials go to `http://` URLs either way.
        public var allowsCredentialsOverCleartext = false
        /// Whether identical in-flight requests share one upstream call. On by default; a request can
        /// still opt out with ``CoalescingPolicy/never``.
        public var isCoalescingEnabled: Bool
        /// Header names whose values make two requests different for coalescing even when
        /// ``coalescingIgnoredHeaders`` names them. Empty by default: every header a request carries already takes
        /// part in the ``RequestKey``, except the ignored ones.
        public var coalescingHeaders: [String]
        /// Header names whose values never change the response, so requests that differ only in them still share a
        /// flight. ``RequestKey/perCallHeaders`` by default: trace context (`traceparent`, `tracestate`, B3) and
        /// request ids (`X-Request-ID`).
        ///
        /// Every other header a request carries, whoever set it (the request, ``headers``, an adapter that
        /// declares it in ``RequestAdapter/variesOn``), splits flights: `X-Tenant: acme` never shares with
        /// `X-Tenant: globex`. Add a name here only when the server's answer cannot depend on it; a credential
        /// field (see ``credentials``) is never ignored.
        ///
        /// ```swift
        /// configuration.coalescingIgnoredHeaders.insert("X-Client-Version")
        /// ```
        public var coalescingIgnoredHeaders: Set<String> {
            didSet { coalescingIgnoredHeaders = Set(coalescingIgnoredHeaders.map { $0.lowercased() }) }
        }
        /// Headers sent with every request unless the request sets the same name. Credential fields among them
        /// (see ``credentials``) go only to the base URL's origin and ``trustedOrigins``.
        public var headers: HeaderFields
        /// The deadline of one attempt when the request sets none. 60 seconds by default.
        ///
        /// It also bounds what a caller waits for before its attempt: a token refresh, and a flight it joined
        /// (a joiner leaves with ``APIError/timedOut(_:)`` when its own timeout passes, and the flight goes on for
        /// the others); and, for a streamed body, each wait for its next chunk (see ``APIRequest/timeout``).
        public var timeout: Duration
        /// The deadline of a whole call when the request sets none: every wait (a token refresh, a shared flight,
        /// each attempt, the delays between retries) ends by it, and a retry whose delay (`Retry-After` included)
        /// would end past it is not made. `nil` by default: only ``timeout`` applies, per attempt.
        public var callTimeout: Duration?
        /// The status codes that count as success; anything else fails with
        /// ``APIError/unacceptableStatus(_:)``. `200..<300` by default.
        public var acceptableStatusCodes: Range<Int>
        /// Decodes response bodies.
        public var decoder: JSONDecoder
        /// Encodes ``RequestPayload/json(_:)`` bodies.
        public var encoder: JSONEncoder
        /// The clock for deadlines and retry delays. `ContinuousClock` by default; tests inject a
        /// manual clock so that time moves only when they say.
        public var clock: any Clock<Duration>
        /// The current date, for reading HTTP dates such as `Retry-After` and for the cache's age and freshness
        /// arithmetic (`Date`, `Expires`, `Last-Modified`, `Age`). `Date()` by default.
        public var currentDate: @Sendable () -> Date
        /// Called synchronously with every step of every call, in the task where it happens, and before each attempt
        /// to add header fields (trace context); see ``CallObserver``. Empty by default.
        public var observers: [any CallObserver] = []
        /// Turns a response with a status the client does not accept into your own error; `nil` (the default) throws
        /// ``APIError/unacceptableStatus(_:)``. A request's ``APIRequest/errorMapping`` wins over it.
        public var errorMapping: ResponseErrorMapping? = nil
        /// Which responses mean that the credential an attempt carried is no longer good, so the ``authenticator``
        /// refreshes it and the request is sent again, once. A `401` by default; some APIs answer `403`, or `400`
        /// with an error code in the body. Consulted only for requests the authenticator authorized.
        public var isCredentialRejected: @Sendable (TransportResponse) -> Bool = { $0.statusCode == 401 }
        /// Which redirects requests follow: up to 20 by default (``RedirectPolicy/default``). A request's
        /// ``APIRequest/redirectPolicy`` wins over it.
        public var redirectPolicy: RedirectPolicy = .default
        /// The retry budget, circuit breakers, hedging and load limit that protect the upstream when it degrades; see
        /// ``Resilience``. ``Resilience/default`` (a retry budget and a circuit breaker per origin) by default.
        public var resilience: Resilience = .default
        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - transport: Sends requests. ``URLSessionTransport`` by default.
        ///   - cache: The response cache, or `nil` for none. A new ``ResponseCache`` by default.
        ///   - retryPolicy: Decides whether failed attempts are sent again.
        ///   - adapters: Run in order on every attempt.
        ///   - authenticator: Provides and renews the credential of requests that require authentication.
        ///   - isCoalescingEnabled: Whether identical in-flight requests share one upstream call.
        ///   - headers: Headers sent with every request.
        ///   - timeout: The deadline of one attempt when the request sets none.
        ///   - clock: The clock for deadlines and retry delays.
        ///   - currentDate: The current date, for HTTP dates.
        public init(
            transport: any HTTPTransport = URLSessionTransport(),
            cache: ResponseCache? = ResponseCache(),
            retryPolicy: RetryPolicy = .default,
            adapters: [any RequestAdapter] = [],
            authenticator: TokenRefresher? = nil,
            isCoalescingEnabled: Bool = true,
            headers: HeaderFields = [:],
            timeout: Duration = .seconds(60),
            clock: any Clock<Duration> = ContinuousClock(),
            currentDate: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.transport = transport
            self.cache = cache
            self.retryPolicy = retryPolicy
            self.adapters = adapters
            self.authenticator = authenticator
            self.authorize = { request, credential in
                request.headers["Authorization"] = "Bearer \(credential.accessToken)"
            }
            self.isCoalescingEnabled = isCoalescingEnabled
            self.coalescingHeaders = []
            self.coalescingIgnoredHeaders = RequestKey.perCallHeaders
            self.headers = headers
            self.timeout = timeout
            self.callTimeout = nil
            self.acceptableStatusCodes = 200..<300
            self.decoder = JSONDecoder()
            self.encoder = JSONEncoder()
            self.clock = clock
            self.currentDate = currentDate
            self.credentials = .standard
            self.trustedOrigins = []
        }
    }
}
