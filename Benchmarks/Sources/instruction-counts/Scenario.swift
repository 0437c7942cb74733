import BenchmarkSupport
import Courier
import Foundation
import Synchronization

/// What the harness can run. Scripts/instructions.sh subtracts the baselines (`loop`, `transport`, `empty-tasks`)
/// from the scenarios they underlie, so only Courier's own work remains.
enum Scenario: String, CaseIterable {
    /// Baseline: the loop with a body that does nothing; the cache hits are counted above it.
    case loop
    /// Baseline: the in-memory transport called directly, in the same loop the network scenarios use.
    case transport
    /// `APIRequest<Data>`, cache off (`cache: nil`): every call goes to the transport.
    case cacheOff = "cache-off"
    /// `APIRequest<Data>`, the default cache, a `Cache-Control: no-store` response: looked up, sent, never stored.
    case uncacheable
    /// `APIRequest<Data>` with a new query each call (`?key=N`), the default cache, the response nginx gives the
    /// throughput benchmark (``nginxResponse``): every call misses, is sent and is stored, and past the cache's capacity
    /// each store evicts the oldest entry. The load of the nginx throughput benchmark (distinct keys, default cache),
    /// without the network.
    case distinctStored = "distinct-stored"
    /// Baseline for `distinct-stored`: what its caller builds for each request before it calls Courier (the query
    /// item, with the key's text), built and dropped in the same loop. The caller's array and number formatting are
    /// not Courier's work; `APIRequest.get`, which is, stays counted in `distinct-stored`.
    case distinctInputs = "distinct-inputs"
    /// `APIRequest<Data>`, a fresh hit: the response was stored by the first warm-up call (`max-age=3600`).
    case dataHit = "data-hit"
    /// `APIRequest<SampleItem>`, a fresh hit: as `data-hit`, plus whatever it takes to produce the decoded value.
    case decodedHit = "decoded-hit"
    /// Rounds of concurrent callers of one key of `APIRequest<SampleItem>`, cache off: one leads, the others join.
    case joiners
    /// `joiners` with the client's cache on and a response it may not store (`no-store`): every joiner of a flight
    /// whose leader found nothing stored skips its own lookup (`NothingStored`), as callers of a burst do against a
    /// cache that holds nothing for their URL.
    case cachedJoiners = "cached-joiners"
    /// Baseline: the rounds of `joiners` with tasks that do not call Courier.
    case emptyTasks = "empty-tasks"
    /// Reference for `joiners`: the same rounds through the coalescing report's "actor + [String: Task]" baseline,
    /// whose shared task fetches from the same transport and decodes once, as users write it.
    case actorJoiners = "actor-joiners"
    /// Reference for `joiners`: the same rounds through the report's "lock + continuations, cancellable" baseline, a
    /// coalescer with the per-caller cancellation every Courier joiner has.
    case cancellableJoiners = "cancellable-joiners"

    /// Whether an iteration is a round of concurrent callers rather than one call.
    var isRound: Bool {
        switch self {
        case .joiners, .cachedJoiners, .emptyTasks, .actorJoiners, .cancellableJoiners: true
        default: false
        }
    }

    /// Calls made before the measured ones. A decoded hit costs the runtime about 1,000,000 instructions once, between
    /// calls 1,100 and 2,100 (a conformance looked up and metadata instantiated; session 15): after 100 calls of
    /// warm-up that one-time cost fell in the 2N run and not the N run, and counted as 680 instructions per call
    /// (6,519; the 1,000 calls after call 3,100 cost 5,540 each). The other loops measure the same after 100 calls as
    /// after 4,000 (cache-off: 15,781, 15,800 and 15,781 thousand instructions for calls 100–1,100, 1,100–2,100 and
    /// 2,100–3,100), so they keep the shorter warm-up.
    var warmUpCalls: Int { self == .decodedHit ? 2_000 : 100 }

    static let baseURL = URL(string: "https://api.example.com")!

    /// `200 OK` with the sample item as JSON, and `Cache-Control` when given.
    static func response(cacheControl: String? = nil) -> TransportResponse {
        var headers: HeaderFields = ["Content-Type": "application/json"]
        if let cacheControl { headers["Cache-Control"] = cacheControl }
        return TransportResponse(statusCode: 200, headers: headers, body: SampleItem.json)
    }

    /// The loop body of a one-call-per-iteration scenario, and how to check afterwards that every call took the
    /// path it is named for (a harness that measures the wrong path silently is worse than none).
    func makeLoop() -> CallLoop {
        switch self {
        case .loop:
            return CallLoop(call: {}, verify: { _ in })
        case .transport:
            let transport: any HTTPTransport = InMemoryTransport(response: Self.response())
            let request = TransportRequest(url: Self.baseURL.appending(path: "items/1"))
            return CallLoop(call: { _ = try await transport.send(request) }, verify: { _ in })
        case .cacheOff:
            return Self.networkLoop(cache: nil, cacheControl: nil)
        case .uncacheable:
            return Self.networkLoop(cache: ResponseCache(), cacheControl: "no-store")
        case .distinctStored:
            return Self.distinctStoredLoop()
        case .distinctInputs:
            let next = Atomic(0)
            return CallLoop(
                call: { discard(Self.distinctQuery(next.add(1, ordering: .relaxed).newValue)) }, verify: { _ in })
        case .dataHit:
            return Self.hitLoop(APIRequest<Data>.get("/items/1"))
        case .decodedHit:
            return Self.hitLoop(APIRequest<SampleItem>.get("/items/1"))
        case .joiners, .cachedJoiners, .emptyTasks, .actorJoiners, .cancellableJoiners:
            preconditionFailure("\(rawValue) runs in rounds, see Rounds")
        }
    }

    private static func client(cache: ResponseCache?, cacheControl: String?) -> APIClient {
        let transport = InMemoryTransport(response: response(cacheControl: cacheControl))
        return APIClient(baseURL: baseURL, configuration: .init(transport: transport, cache: cache))
    }

    private static func networkLoop(cache: ResponseCache?, cacheControl: String?) -> CallLoop {
        let client = client(cache: cache, cacheControl: cacheControl)
        let request = APIRequest<Data>.get("/items/1")
        return CallLoop(
            call: { _ = try await client.send(request) },
            verify: { calls in
                let metrics = client.metrics
                try expect(metrics.upstreamCalls == calls, "\(metrics.upstreamCalls) upstream calls for \(calls) calls")
                try expect(metrics.cacheHits == 0 && metrics.joined == 0, "calls were answered without the network")
                if let cache {
                    let stored = await cache.count
                    try expect(stored == 0, "the cache stored \(stored) entries of an uncacheable response")
                }
            })
    }

    /// What nginx answers for the throughput benchmark's static JSON file (Benchmarks/Throughput/Scripts/
    /// throughput.sh): no `Cache-Control`, so the cache stores it for its validators and a heuristic lifetime; its
    /// `Connection` field is one the cache must leave out.
    static let nginxResponse = TransportResponse(
        statusCode: 200,
        headers: [
            "Server": "nginx/1.22.1", "Date": "Thu, 26 Nov 2026 13:00:00 GMT", "Content-Type": "application/json",
            "Content-Length": "\(SampleItem.json.count)", "Last-Modified": "Thu, 26 Nov 2026 12:00:00 GMT",
            "Connection": "keep-alive", "ETag": "\"6745f0a0-dd\"", "Accept-Ranges": "bytes",
        ],
        body: SampleItem.json)

    private static func distinctStoredLoop() -> CallLoop {
        let cache = ResponseCache()
        let client = APIClient(
            baseURL: baseURL,
            configuration: .init(transport: InMemoryTransport(response: nginxResponse), cache: cache))
        let next = Atomic(0)
        return CallLoop(
            call: {
                let query = distinctQuery(next.add(1, ordering: .relaxed).newValue)
                _ = try await client.send(APIRequest<Data>.get("/items", query: query))
            },
            verify: { calls in
                let metrics = client.metrics
                try expect(metrics.upstreamCalls == calls, "\(metrics.upstreamCalls) upstream calls for \(calls) calls")
                try expect(metrics.cacheHits == 0, "\(metrics.cacheHits) hits on keys never asked before")
                let stored = await cache.count
                try expect(stored == min(calls, cache.maxEntries), "the cache holds \(stored) entries")
            })
    }

    /// The query of the `key`th distinct request: what the caller of `distinct-stored` builds, and `distinct-inputs`
    /// builds alone.
    @inline(__always)
    private static func distinctQuery(_ key: Int) -> [URLQueryItem] {
        [URLQueryItem(name: "key", value: "\(key)")]
    }

    private static func hitLoop<T: Decodable & Sendable>(_ request: APIRequest<T>) -> CallLoop {
        let client = client(cache: ResponseCache(), cacheControl: "max-age=3600")
        return CallLoop(
            call: { _ = try await client.send(request) },
            verify: { calls in
                let metrics = client.metrics
                try expect(metrics.upstreamCalls == 1, "\(metrics.upstreamCalls) upstream calls, 1 expected")
                try expect(
                    metrics.cacheHits == calls - 1, "\(metrics.cacheHits) hits for \(calls - 1) calls after the first")
            })
    }
}

/// One call per iteration, and a check of the client's counters after `calls` calls (warm-up included).
struct CallLoop: Sendable {
    let call: @Sendable () async throws -> Void
    let verify: @Sendable (_ calls: Int) async throws -> Void
}

/// A check that failed: the scenario did not take the path it is named for.
struct HarnessError: Error, CustomStringConvertible {
    let description: String
}

func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    guard condition else { throw HarnessError(description: message()) }
}

/// Takes `query` and does nothing with it, unoptimized, so that building it is not optimized away.
@_optimize(none)
@inline(never)
private func discard(_ query: [URLQueryItem]) {}
