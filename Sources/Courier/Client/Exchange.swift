import Foundation

/// What one flight produced: the request as last sent, the response, and how it was obtained.
/// Shared by every caller of a coalesced flight; each caller decodes its own value from it.
///
/// The flight's fields sit behind one reference, copied on write; only ``joined``, which differs per caller, is kept
/// inline. An exchange passes through the flight's task, the coalescer's result and every caller's frames, and as a
/// struct of 136 bytes each of those async frames held a copy: the flight task's frames outgrew the task's first slab
/// of memory and allocated more from the heap on every call.
@usableFromInline
struct Exchange: Sendable {
    /// Whether this caller joined a flight another call led.
    var joined = false
    private var storage: Storage

    init(
        request: TransportRequest, response: TransportResponse, attempts: Int, source: ResponseSource = .network,
        leader: CallID? = nil, decoded: DecodedValue? = nil, timings: FlightTimings = FlightTimings()
    ) {
        storage = Storage(
            request: request, response: response, attempts: attempts, source: source, leader: leader, timings: timings)
        storage.decoded = decoded
    }

    var request: TransportRequest { storage.request }
    /// The call that led the flight, so that joiners can name it in their events.
    var leader: CallID? { storage.leader }
    /// The flight's attempts and retry delays, for ``APIResponse/timings``.
    var timings: FlightTimings { storage.timings }

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
        @exclusivity(unchecked) var attempts: Int
        @exclusivity(unchecked) var response: TransportResponse
        @exclusivity(unchecked) var source: ResponseSource
        @exclusivity(unchecked) var decoded: DecodedValue?

        init(
            request: TransportRequest, response: TransportResponse, attempts: Int, source: ResponseSource,
            leader: CallID?, timings: FlightTimings
        ) {
            self.request = request
            self.response = response
            self.attempts = attempts
            self.source = source
            self.leader = leader
            self.timings = timings
        }

        convenience init(copying other: Storage) {
            self.init(
                request: other.request, response: other.response, attempts: other.attempts, source: other.source,
                leader: other.leader, timings: other.timings)
            decoded = other.decoded
        }
    }
}
