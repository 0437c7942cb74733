import Foundation

/// Where the answer to a call came from.
public enum ResponseSource: String, Sendable, Hashable, CustomStringConvertible {
    /// The server sent this response.
    case network
    /// The response cache held a fresh response; nothing was sent.
    case cache
    /// The cache held a stale response, the server confirmed it with `304 Not Modified`, and the
    /// stored body was served.
    case revalidated
    /// The cache served a stale response at once and refreshes it in the background.
    case staleWhileRevalidate

    /// The raw value.
    public var description: String { rawValue }
}

/// The answer to ``APIClient``'s `send(_:)`: the decoded value and how it was obtained.
public struct APIResponse<Value> {
    /// The decoded value.
    public let value: Value
    /// Everything but the value. Kept apart so that the client builds it without knowing `Value`: `send(_:)` is
    /// inlined into the caller's module and specialized for its type, and only this line of it touches the value.
    @usableFromInline
    let head: ResponseHead

    /// The raw response body.
    @inlinable public var data: Data { head.data }
    /// The status code of the response.
    @inlinable public var statusCode: Int { head.statusCode }
    /// The response header fields.
    @inlinable public var headers: HeaderFields { head.headers }
    /// The URL the response came from: where the request was sent, or after redirects, where the last one led.
    @inlinable public var url: URL { head.url }
    /// Where the response came from: the network, the cache, or a revalidated cache entry.
    @inlinable public var source: ResponseSource { head.source }
    /// `true` when this caller did not send its own request but shared an identical one that another
    /// caller had in flight.
    @inlinable public var joined: Bool { head.joined }
    /// How many times the request was sent to produce this response, counting retries and the resend
    /// after a token refresh. `0` when the response came from the cache without contacting the server.
    @inlinable public var attempts: Int { head.attempts }
    /// The id of the call that produced this response, as its ``ClientEvent``s carry it, so that a caller can find its
    /// own events; `nil` for a response made by hand.
    @inlinable public var callID: CallID? { head.callID }
    /// How long the call and each of its attempts took, and the bytes sent and received. See ``CallTimings``.
    @inlinable public var timings: CallTimings { head.timings }
    /// What the mirror redacts in ``url``: the policy of the request that was sent.
    var credentials: CredentialPolicy { head.credentials }

    /// Creates a response. Useful in tests of code that consumes responses.
    ///
    /// - Parameters:
    ///   - value: The decoded value.
    ///   - data: The raw response body.
    ///   - statusCode: The status code of the response.
    ///   - headers: The response header fields.
    ///   - url: The URL the request was sent to.
    ///   - source: Where the response came from.
    ///   - joined: Whether the caller shared another caller's request.
    ///   - attempts: How many times the request was sent; `0` for an answer from the cache.
    public init(
        value: Value, data: Data, statusCode: Int, headers: HeaderFields, url: URL,
        source: ResponseSource = .network, joined: Bool = false, attempts: Int = 1
    ) {
        self.init(
            value: value,
            head: ResponseHead(
                data: data, statusCode: statusCode, headers: headers, url: url, source: source, joined: joined,
                attempts: attempts, credentials: .standard))
    }

    @inlinable
    init(value: Value, head: ResponseHead) {
        self.value = value
        self.head = head
    }

    /// Returns a response with the same metadata and a transformed value.
    ///
    /// - Parameter transform: Makes the new value from ``value``.
    /// - Returns: A response whose ``value`` is `transform(value)`.
    @inlinable
    public func map<NewValue>(_ transform: (Value) throws -> NewValue) rethrows -> APIResponse<NewValue> {
        APIResponse<NewValue>(value: try transform(value), head: head)
    }
}

/// Everything an ``APIResponse`` holds but its value: the exchange its flight (or the cache) produced, shared with
/// every other caller of that flight, and what belongs to this caller alone.
///
/// The fields are read from the exchange when asked for, not copied out of it. A response travels through the
/// caller's async frames, and with a dozen fields of its own (body, header fields, URL, timings with their arrays)
/// it made each frame 200 bytes larger, and building it retained every field; now building it retains one reference.
/// The price: a response keeps the exchange alive while it lives, the request as sent (its body too) included.
@usableFromInline
struct ResponseHead: Sendable {
    /// The flight's exchange as this caller got it (``Exchange/joined`` is this caller's).
    let exchange: Exchange
    @usableFromInline let callID: CallID?
    /// How long the call took in all, and how long it waited for the flight it joined (`nil` when it led its own).
    let total: Duration
    let sharedFlightWait: Duration?

    init(_ exchange: Exchange, callID: CallID? = nil, total: Duration = .zero, sharedFlightWait: Duration? = nil) {
        self.exchange = exchange
        self.callID = callID
        self.total = total
        self.sharedFlightWait = sharedFlightWait
    }

    /// A head made by hand: an exchange that holds exactly the given fields.
    init(
        data: Data, statusCode: Int, headers: HeaderFields, url: URL, source: ResponseSource, joined: Bool,
        attempts: Int, credentials: CredentialPolicy
    ) {
        var exchange = Exchange(
            request: TransportRequest(url: url, credentials: credentials),
            response: TransportResponse(statusCode: statusCode, headers: headers, body: data), attempts: attempts,
            source: source)
        exchange.joined = joined
        self.init(exchange)
    }

    @usableFromInline var data: Data { exchange.response.body }
    @usableFromInline var statusCode: Int { exchange.response.statusCode }
    @usableFromInline var headers: HeaderFields { exchange.response.headers }
    @usableFromInline var url: URL { exchange.response.url ?? exchange.request.url }
    @usableFromInline var source: ResponseSource { exchange.source }
    @usableFromInline var joined: Bool { exchange.joined }
    @usableFromInline var attempts: Int { exchange.attempts }
    var credentials: CredentialPolicy { exchange.request.credentials }

    @usableFromInline var timings: CallTimings {
        var timings = CallTimings()
        timings.total = total
        timings.flight = exchange.timings
        if exchange.joined, let sharedFlightWait {
            timings.sharedFlightLeader = exchange.leader
            timings.sharedFlightWait = sharedFlightWait
        }
        return timings
    }
}

extension APIResponse: Sendable where Value: Sendable {}

extension APIResponse: CustomReflectable {
    /// The fields with the URL's credentials and credential header values redacted, so `dump` and
    /// reflection-based loggers never show a secret the request carried or a `Set-Cookie` it received.
    public var customMirror: Mirror {
        let redaction = Redaction(credentials)
        return Mirror(
            self,
            children: [
                "value": value, "data": "\(data.count) bytes", "statusCode": statusCode,
                "headers": redaction.redact(headers), "url": redaction.redact(url), "source": source,
                "joined": joined, "attempts": attempts,
            ],
            displayStyle: .struct)
    }
}
