import Foundation

/// What one flight produced: the request as last sent, the response, and how it was obtained.
/// Shared by every caller of a coalesced flight; each caller decodes its own value from it.
///
/// The flight's fields sit behind one reference, copied on write; only ``joined``, which differs per caller, is kept
/// inline: an exchange passes through the flight's task, the coalescer's result and every caller's frames
/// (`Docs/Performance.md#async-frames`).
@usableFromInline
struct Exchange: Sendable {
    /// Whether this caller joined a flight another call led.
    var joined = false
    private var storage: Storage

    init(
        request: TransportRequest, response: TransportResponse, attempts: Int, source: ResponseSource = .network,
        leader: CallID? = nil, decoded: DecodedValue? = nil, timings: FlightTimings = FlightTimings(),
        asked: TransportRequest? = nil, bodyStream: ByteStream? = nil
    ) {
        storage = Storage(
            request: request, response: response, attempts: attempts, source: source, leader: leader, timings: timings,
            asked: asked, bodyStream: bodyStream)
        storage.decoded = decoded
    }

    var request: TransportRequest { storage.request }
    /// The call that led the flight, so that joiners can name it in their events.
    var leader: CallID? { storage.leader }
    /// The request the flight was keyed on (its first attempt before observers and authorization), which a joiner's
    /// request is matched against the response's `Vary` with; `nil` when it is ``request``, the one sent (no
    /// authorization or adapter changed it), or when the exchange did not come from a flight.
    var asked: TransportRequest? { storage.asked }
    /// The flight's attempts and retry delays, for ``APIResponse/timings``.
    var timings: FlightTimings { storage.timings }
    /// When the flight answered, on the client's event clock, for the callers that shared it
    /// (``CallTimings/sharedFlightWait``): read once by the flight rather than once by each of them; `nil` for an
    /// exchange no caller joined.
    var answeredAt: Duration? { storage.answeredAt }

    /// Records when the flight answered. The one write to the storage through a shared reference: the flight makes it
    /// under the coalescer's lock, after the answer is complete and before any caller is resumed with it, and the
    /// callers read it only after they are resumed (``RequestCoalescer``).
    func markAnswered(at time: Duration) {
        storage.answeredAt = time
    }
    /// The body still arriving, for a streamed shape whose acceptable response came from the network; `nil` when the
    /// body is whole in ``response`` (a buffered call, a stored response, an error's body).
    var bodyStream: ByteStream? {
        get { storage.bodyStream }
        _modify { yield &uniqueStorage().bodyStream }
    }
    /// The same exchange with its body whole in ``response`` (the stream read or dropped).
    var withoutBodyStream: Exchange {
        var exchange = self
        exchange.bodyStream = nil
        return exchange
    }

    /// The same exchange with its body arriving through `stream`.
    func withBodyStream(_ stream: ByteStream) -> Exchange {
        var exchange = self
        exchange.bodyStream = stream
        return exchange
    }

    @usableFromInline
    var response: TransportResponse {
        get { storage.response }
        _modify { yield &uniqueStorage().response }
    }
    var attempts: Int {
        get { storage.attempts }
        _modify { yield &uniqueStorage().attempts }
    }
    var source: ResponseSource {
        get { storage.source }
        _modify { yield &uniqueStorage().source }
    }
    /// The body decoded once in the flight, for callers that ask for the leader's type.
    @usableFromInline
    var decoded: DecodedValue? {
        get { storage.decoded }
        _modify { yield &uniqueStorage().decoded }
    }

    /// The caller's response, for the paths that are not inlined into the caller (uploads).
    func makeResponse<Value>(value: Value) -> APIResponse<Value> {
        APIResponse(value: value, head: ResponseHead(self))
    }

    /// The storage, copied first when another exchange shares it.
    private mutating func uniqueStorage() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(copying: storage) }
        return storage
    }

    /// The flight's fields. Changed only through an exchange that holds the sole reference, which is what makes
    /// sharing it across tasks safe, and why the run-time exclusivity check can be left out: two accesses can never
    /// overlap.
    private final class Storage: @unchecked Sendable {
        let request: TransportRequest
        let leader: CallID?
        let timings: FlightTimings
        let asked: TransportRequest?
        @exclusivity(unchecked) var bodyStream: ByteStream?
        @exclusivity(unchecked) var attempts: Int
        @exclusivity(unchecked) var response: TransportResponse
        @exclusivity(unchecked) var source: ResponseSource
        @exclusivity(unchecked) var decoded: DecodedValue?
        @exclusivity(unchecked) var answeredAt: Duration?

        init(
            request: TransportRequest, response: TransportResponse, attempts: Int, source: ResponseSource,
            leader: CallID?, timings: FlightTimings, asked: TransportRequest?, bodyStream: ByteStream?
        ) {
            self.request = request
            self.response = response
            self.attempts = attempts
            self.source = source
            self.leader = leader
            self.timings = timings
            self.asked = asked
            self.bodyStream = bodyStream
        }

        convenience init(copying other: Storage) {
            self.init(
                request: other.request, response: other.response, attempts: other.attempts, source: other.source,
                leader: other.leader, timings: other.timings, asked: other.asked, bodyStream: other.bodyStream)
            decoded = other.decoded
            answeredAt = other.answeredAt
        }
    }
}

extension Exchange {
    /// Whether this flight's response may answer `request`, a joiner's: the request has the flight's value for every
    /// field the response's `Vary` names (RFC 9111 §4.1), and the response does not vary on everything.
    ///
    /// The key already compares every field but the ignored ones and credentials, so a mismatch is rare; a joiner
    /// whose request is the leader's own (a plain `GET` built once for its URL) is answered without reading `Vary`.
    func serves(_ request: TransportRequest) -> Bool {
        // Asked of the stored requests in place: bound to a variable first, the one asked was retained and released.
        let isLeaders =
            storage.asked == nil
            ? storage.request.sharesStorage(with: request)
            : storage.asked.unsafelyUnwrapped.sharesStorage(with: request)
        if isLeaders { return true }
        return Self.varyMatches(response.headers, request, asked ?? self.request)
    }

    @inline(never)  // the rare case stays off the joiner's path
    private static func varyMatches(_ headers: HeaderFields, _ request: TransportRequest, _ leader: TransportRequest)
        -> Bool
    {
        guard headers.contains("Vary") else { return true }
        let names = headers.values(for: "Vary").flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty }
        guard names.count <= CachedResponse.maxVaryNames, !names.contains("*") else { return false }
        // Credentials are compared by the key already; the leader's authorization is added per attempt and the
        // joiner's is not yet, so they would never match here.
        return names.allSatisfy { name in
            request.credentials.headerNames.contains(name)
                || request.headers.values(for: name) == leader.headers.values(for: name)
        }
    }
}
