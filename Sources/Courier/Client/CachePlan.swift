import Foundation

/// What the cache decided for one call: the value the path of a call switches over (see ``APIClient``).
enum CachePlan: Sendable {
    /// Serve this stored response, with its body already decoded as the caller asked when the cache kept that beside
    /// it; send nothing.
    case serve(TransportResponse, decoded: DecodedValue?)
    /// Serve this stale response now (`stale-while-revalidate`) and send `revalidation` in the background.
    case serveStale(TransportResponse, revalidation: Outgoing)
    /// Send, then record the answer in the cache as the outgoing request says.
    case send(Outgoing)
}

/// A stored response that may answer a call whose exchange failed.
struct Fallback: Sendable {
    var entry: CachedResponse
    /// Whether it stands in at any age (``CachePolicy/returnCacheWhenOffline``) rather than within its
    /// `stale-if-error` window.
    var atAnyAge: Bool
}

/// What a flight sends and what the answer changes in the cache: done once inside the flight, however many
/// callers share it.
struct Outgoing: Sendable {
    /// What the answer does to the cache.
    enum Record: Sendable {
        /// Nothing: no cache, a private call, or a method the cache neither stores nor invalidates.
        case nothing
        /// Store a `GET` response under `lookup` (a `304` to the cache's own validation is merged into
        /// `validating` instead, RFC 9111 §4.3.4).
        case store(lookup: TransportRequest, partition: String?, validating: CachedResponse?)
        /// A successful unsafe request removes the stored responses it makes stale (RFC 9111 §4.4); a `POST`
        /// response that names its own URL in `Content-Location` is then stored for that URL under `partition`
        /// (§4), unless the call is private (`partition` is then `.none`).
        case invalidate(TransportRequest, partition: String??)
    }

    /// The first attempt: the request as the adapters returned it, with any validator the cache added.
    var request: TransportRequest
    var record: Record
    /// A stored response that may stand in when the exchange fails (`stale-if-error`, RFC 5861 §4, or
    /// ``CachePolicy/returnCacheWhenOffline``).
    var fallback: Fallback?
    /// When the request was sent, for the stored response's age (RFC 9111 §4.2.3).
    var requestTime: Date
    /// How long a response that names no lifetime stays fresh: the request's, else the client's.
    var defaultFreshness: Duration? = nil
    /// Whether the lookup found nothing at all stored for the request: a flight that sends this keeps the proof, and
    /// its joiners skip their own lookup while it holds (``NothingStored``).
    var nothingStored = NothingStored.unproven

    /// Whether the answer is recorded at all; without a cache, or for a private call, there is nothing to record.
    var changesTheCache: Bool {
        if case .nothing = record { false } else { true }
    }
}
