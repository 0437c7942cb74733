import Foundation

/// A description of one API call whose successful answer decodes to `Value`.
///
/// A request names its target by a path relative to the client's base URL (`"/users/42"`) or by an
/// absolute URL (`"https://cdn.example.com/a.png"`), and carries the query, headers, body and per-call
/// options. It is a plain value: build it anywhere, send it from any task.
///
/// ```swift
/// struct User: Decodable { let id: Int; let name: String }
///
/// let user = try await client.send(APIRequest<User>.get("/users/42")).value
/// try await client.send(APIRequest<Void>.post("/users", body: NewUser(name: "Ada")))
/// ```
///
/// `APIRequest<Data>` returns the raw body, and `APIRequest<Void>` ignores it.
public struct APIRequest<Value>: Sendable {
    /// Everything the request holds. `Value` only says how the caller decodes, so the call's own steps (building,
    /// sending, caching) take these fields as they are: `send(_:)` hands them on without copying the request into an
    /// `APIRequest<Data>`, which retained and released each of its fields on every call.
    @usableFromInline
    var fields: RequestFields

    /// The request method.
    public var method: RequestMethod {
        get { fields.method }
        _modify { yield &fields.method }
    }
    /// A path relative to the client's base URL, such as `"/users/42"`, or an absolute `http(s)` URL.
    ///
    /// The path may carry its own query (`"/search?q=swift"`); ``query`` items are appended to it.
    /// Characters that cannot appear in a URL path (spaces, non-ASCII letters) are percent-encoded;
    /// control characters, fragments and broken percent-escapes are rejected with
    /// ``APIError/invalidRequest(_:)`` before anything is sent.
    public var path: String {
        get { fields.path }
        _modify { yield &fields.path }
    }
    /// Query items, percent-encoded per RFC 3986 (everything but unreserved characters is escaped,
    /// so `+`, `&` and `=` in values reach the server intact).
    public var query: [URLQueryItem] {
        get { fields.query }
        _modify { yield &fields.query }
    }
    /// Header fields for this request. They override the client's default headers of the same name.
    public var headers: HeaderFields {
        get { fields.headers }
        _modify { yield &fields.headers }
    }
    /// The body, if any.
    public var body: RequestPayload? {
        get { fields.body }
        _modify { yield &fields.body }
    }
    /// How the request uses the client's ``ResponseCache``. ``CachePolicy/useProtocolPolicy`` by default.
    public var cachePolicy: CachePolicy {
        get { fields.cachePolicy }
        _modify { yield &fields.cachePolicy }
    }
    /// How long this request's response stays fresh in the cache when it names no lifetime itself (no `max-age`,
    /// no `Expires`); `nil` uses ``APIClient/Configuration/defaultFreshness``. Never overrides `no-store`,
    /// `no-cache` or `must-revalidate`.
    public var defaultFreshness: Duration? {
        get { fields.defaultFreshness }
        _modify { yield &fields.defaultFreshness }
    }
    /// Whether identical in-flight requests may share one upstream call. See ``CoalescingPolicy``.
    public var coalescing: CoalescingPolicy {
        get { fields.coalescing }
        _modify { yield &fields.coalescing }
    }
    /// Whether the client's authenticator should authorize this request. It does only when the target is the
    /// base URL's origin or one of ``APIClient/Configuration/trustedOrigins``, unless
    /// ``sendsCredentialsToAnyOrigin`` says otherwise.
    public var requiresAuthentication: Bool {
        get { fields.requiresAuthentication }
        _modify { yield &fields.requiresAuthentication }
    }
    /// Whether the client's credentials (the authenticator's and the credential fields of the default headers)
    /// go with this request even when its origin is not trusted. `false` by default: an absolute URL to another
    /// host, such as a CDN, never receives the API's token by accident.
    public var sendsCredentialsToAnyOrigin: Bool {
        get { fields.sendsCredentialsToAnyOrigin }
        _modify { yield &fields.sendsCredentialsToAnyOrigin }
    }
    /// The longest one attempt may take before it fails with ``APIError/timedOut(_:)``; `nil` uses the
    /// client's ``APIClient/Configuration/timeout``. Courier enforces it on its own clock, so
    /// sub-second deadlines work on every platform.
    ///
    /// For a streamed response (``APIClient/stream(_:)``, ``APIClient/download(_:to:)``, server-sent events) it
    /// bounds the wait for the head and then, as an idle timeout, each wait for the next chunk of the body: a server
    /// that sends the head and falls silent fails the reader with ``APIError/timedOut(_:)`` and the transfer is
    /// stopped. Only waiting counts (a reader that takes its time between chunks is never timed out), and each chunk
    /// starts the count again, so a long download runs as long as its bytes keep coming. An event stream that
    /// may stay silent for longer (without comments to keep it alive) needs a longer timeout; when it passes, the
    /// stream reconnects. For an upload of a ``StreamedBody`` it starts again each time the transport takes another
    /// part of the body, so it bounds each stall of the upload, then the wait for the response, never the whole
    /// upload.
    public var timeout: Duration? {
        get { fields.timeout }
        _modify { yield &fields.timeout }
    }
    /// The deadline of the whole call, retries and waits included; `nil` uses the client's
    /// ``APIClient/Configuration/callTimeout``.
    public var callTimeout: Duration? {
        get { fields.callTimeout }
        _modify { yield &fields.callTimeout }
    }
    /// Whether a final status outside ``APIClient/Configuration/acceptableStatusCodes`` fails the call with
    /// ``APIError/unacceptableStatus(_:)`` (`true`, the default) or is returned as an ``APIResponse`` like a success.
    ///
    /// Set it to `false` when the caller reads every status itself, as a client generated from an OpenAPI document
    /// does: a documented `404` is then an answer to switch over, not an error, and events and
    /// ``APIClient/Metrics`` record the call as finished rather than failed.
    ///
    /// ```swift
    /// var request = APIRequest<Data>.get("/users/0")
    /// request.throwsOnUnacceptableStatus = false
    /// let response = try await client.send(request)
    /// if response.statusCode == 404 { print("no such user") }
    /// ```
    ///
    /// Only the last step changes: retries (a `503` is still sent again as the ``RetryPolicy`` says), the refresh
    /// and resend after a `401`, the cache and coalescing work as before, and the response returned is the final
    /// one. A `401` that remains after the refresh, or with no authenticator, still fails with
    /// ``APIError/unauthorized(_:)``, which carries that response. The body is decoded as `Value` whatever the
    /// status, so use `APIRequest<Data>` (or a type that decodes the error bodies too).
    public var throwsOnUnacceptableStatus: Bool {
        get { fields.throwsOnUnacceptableStatus }
        _modify { yield &fields.throwsOnUnacceptableStatus }
    }
    /// Decodes this request's response body in place of the client's ``APIClient/Configuration/decoder``; `nil`
    /// (the default) uses the client's. For an endpoint with its own date format or key style.
    public var decoder: JSONDecoder? {
        get { fields.decoder }
        set { fields.decoder = newValue }
    }
    /// Turns this request's response into your own error when its status is not accepted; `nil` (the default) uses
    /// the client's ``APIClient/Configuration/errorMapping``.
    public var errorMapping: ResponseErrorMapping? {
        get { fields.errorMapping }
        set { fields.errorMapping = newValue }
    }
    /// The latest-wins slot this request belongs to, if any: a newer request in the same slot cancels it, and its
    /// caller gets ``APIError/superseded(slot:)``. `nil` (the default) for none. See ``LatestWins``.
    public var latestWins: LatestWins? {
        get { fields.latestWins }
        set { fields.latestWins = newValue }
    }
    /// Which redirects this request follows; `nil` (the default) uses the client's
    /// ``APIClient/Configuration/redirectPolicy``.
    public var redirectPolicy: RedirectPolicy? {
        get { fields.redirectPolicy }
        set { fields.redirectPolicy = newValue }
    }
    /// Hedged copies for this request alone (see ``HedgingPolicy``), in place of the client's
    /// ``Resilience/hedging``; `nil` (the default) follows the client's. Only a request that may be sent twice is
    /// hedged (an idempotent method, or an `Idempotency-Key`), and copies draw from the retry budget.
    public var hedging: HedgingPolicy? {
        get { fields.hedging }
        set { fields.hedging = newValue }
    }

    /// Creates a request.
    ///
    /// - Parameters:
    ///   - method: The request method.
    ///   - path: A path relative to the base URL, or an absolute URL.
    ///   - query: Query items to append.
    ///   - headers: Header fields for this request.
    ///   - body: The body, if any.
    ///   - cachePolicy: How the request uses the response cache.
    ///   - coalescing: Whether identical in-flight requests may share one upstream call.
    ///   - requiresAuthentication: Whether the client's authenticator should authorize this request.
    ///   - timeout: The deadline of one attempt; `nil` uses the client's default.
    public init(
        method: RequestMethod = .get,
        path: String,
        query: [URLQueryItem] = [],
        headers: HeaderFields = [:],
        body: RequestPayload? = nil,
        cachePolicy: CachePolicy = .useProtocolPolicy,
        coalescing: CoalescingPolicy = .automatic,
        requiresAuthentication: Bool = true,
        timeout: Duration? = nil
    ) {
        fields = RequestFields(method: method, path: path, query: query, headers: headers, body: body)
        fields.cachePolicy = cachePolicy
        fields.coalescing = coalescing
        fields.requiresAuthentication = requiresAuthentication
        fields.timeout = timeout
    }

    /// A request with these fields: the same request typed for another `Value`.
    @inlinable
    init(fields: RequestFields) {
        self.fields = fields
    }

    /// Creates a request for an absolute URL, used as given.
    ///
    /// - Parameters:
    ///   - method: The request method.
    ///   - url: The absolute URL of the target resource.
    ///   - headers: Header fields for this request.
    ///   - body: The body, if any.
    public init(method: RequestMethod = .get, url: URL, headers: HeaderFields = [:], body: RequestPayload? = nil) {
        self.init(method: method, path: url.absoluteString, headers: headers, body: body)
    }
}

/// The fields of an ``APIRequest``, whatever its `Value`: what the steps of a call read.
@usableFromInline
struct RequestFields: Sendable {
    var method: RequestMethod
    var path: String
    var query: [URLQueryItem]
    var headers: HeaderFields
    var body: RequestPayload? {
        didSet { hasBody = body != nil }
    }
    /// Whether ``body`` is set, kept as it changes: the payload holds an existential, and reading whether it is `nil`
    /// (a comparison or a `switch`) copied it out through the runtime's generic witnesses, about 60 instructions of
    /// every call (``isPlainGET``).
    private(set) var hasBody: Bool
    var cachePolicy: CachePolicy
    var defaultFreshness: Duration? = nil
    var coalescing: CoalescingPolicy
    var requiresAuthentication: Bool
    var sendsCredentialsToAnyOrigin = false
    var timeout: Duration?
    var callTimeout: Duration?
    var throwsOnUnacceptableStatus = true
    var decoder: JSONDecoder? {
        get { options?.decoder }
        set { updateOptions { $0.decoder = newValue } }
    }
    var errorMapping: ResponseErrorMapping? {
        get { options?.errorMapping }
        set { updateOptions { $0.errorMapping = newValue } }
    }
    var latestWins: LatestWins? {
        get { options?.latestWins }
        set { updateOptions { $0.latestWins = newValue } }
    }
    var redirectPolicy: RedirectPolicy? {
        get { options?.redirectPolicy }
        set { updateOptions { $0.redirectPolicy = newValue } }
    }
    /// How a streamed shape moves the call's bodies; `nil` for a buffered `send`.
    var hedging: HedgingPolicy? {
        get { options?.values.hedging }
        set { updateOptions { $0.hedging = newValue } }
    }
    var streamed: StreamedShape? {
        get { options?.values.streamed }
        set { updateOptions { $0.streamed = newValue } }
    }

    /// The options most requests never set, behind one reference: a request is passed through every step of a call,
    /// and each byte it grows costs every call (measured in `Scripts/instructions.sh`).
    var options: RequestOptions?

    /// A `GET` with no headers, body, redirect policy or credential option of its own: the request it builds depends
    /// on nothing but its URL and the client (see ``RecentURLs/PlainGET``).
    var isPlainGET: Bool {
        // Checked field by field, cheapest first, without copying the payload or the options out.
        guard method.rawValue == "GET", headers.isEmpty, !sendsCredentialsToAnyOrigin, !hasBody else { return false }
        guard let options else { return true }
        return options.values.redirectPolicy == nil && options.values.streamed?.upload == nil
    }

    init(method: RequestMethod, path: String, query: [URLQueryItem], headers: HeaderFields, body: RequestPayload?) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        hasBody = body != nil
        cachePolicy = .useProtocolPolicy
        coalescing = .automatic
        requiresAuthentication = true
    }

    private mutating func updateOptions(_ change: (inout RequestOptions.Values) -> Void) {
        var values = options?.values ?? RequestOptions.Values()
        change(&values)
        options = RequestOptions(values)
    }
}

/// The rarely set options of an ``APIRequest``, immutable and shared by copies of the request until one changes them.
@usableFromInline
final class RequestOptions: Sendable {
    struct Values: Sendable {
        var decoder: JSONDecoder?
        var errorMapping: ResponseErrorMapping?
        var latestWins: LatestWins?
        var redirectPolicy: RedirectPolicy?
        var streamed: StreamedShape?
        var hedging: HedgingPolicy?
    }

    let values: Values

    init(_ values: Values) { self.values = values }

    var decoder: JSONDecoder? { values.decoder }
    var errorMapping: ResponseErrorMapping? { values.errorMapping }
    var latestWins: LatestWins? { values.latestWins }
    var redirectPolicy: RedirectPolicy? { values.redirectPolicy }
}

/// Whether a request may share an identical request that is already in flight.
public enum CoalescingPolicy: Sendable, Hashable {
    /// Coalesce safe methods (`GET`, `HEAD`) when the client has coalescing on; the default.
    case automatic
    /// Coalesce even a method that is not safe, for example a `POST` used as a query.
    case always
    /// Always send this request on its own.
    case never
}
