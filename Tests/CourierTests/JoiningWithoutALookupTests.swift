import Foundation
import Synchronization
import Testing

@testable import Courier

/// A call whose flight is in the air joins it without asking the cache when the flight's leader found nothing stored
/// for the request and nothing has been stored since (`NothingStored`). Each test proves that what the shortcut skips
/// still holds where it is needed: a response stored meanwhile is served, a call that may not use the network never
/// joins, a cache with a disk tier is asked, and the cache's and the client's counts are those of a lookup.
@Suite(.timeLimit(.minutes(1))) struct JoiningWithoutALookupTests {
    private static let baseURL = URL(string: "https://api.example.com")!

    /// A client over a transport that holds every request until `gate` opens.
    private static func client(_ gate: CoalescerTestKit.Gate, cache: ResponseCache?) -> (APIClient, MockTransport) {
        let transport = MockTransport { _, index in
            _ = await gate.wait()
            return .text(200, "answer \(index)", headers: ["Cache-Control": "max-age=3600"])
        }
        let client = APIClient(
            baseURL: baseURL, configuration: .init(transport: transport, cache: cache, retryPolicy: .never))
        return (client, transport)
    }

    /// How steps 1–3 route `request` for a call started now that may join.
    private static func route(_ request: APIRequest<Data>, on client: APIClient) throws -> APIClient.Route {
        try client.route(request.fields, id: CallID(rawValue: 1_000), decoding: nil, joining: true)
    }

    private static func isJoin(_ route: APIClient.Route) -> Bool {
        if case .join = route { true } else { false }
    }

    private static func provenMisses(_ cache: ResponseCache) -> Int {
        cache.insertions.provenMisses.load(ordering: .relaxed)
    }

    /// Starts a call of `request` and waits until it leads its flight, which `gate` holds.
    private static func lead(_ request: APIRequest<Data>, on client: APIClient) async throws -> Task<Void, any Error> {
        let leader = Task { _ = try await client.send(request) }
        try await CoalescerTestKit.waitForWaiters(1, on: client.coalescer)
        return leader
    }

    @Test func aJoinerOfAFlightWhoseLeaderFoundNothingStoredSkipsItsLookupAndCountsItsMiss() async throws {
        let gate = CoalescerTestKit.Gate()
        let cache = ResponseCache()
        let (client, transport) = Self.client(gate, cache: cache)
        let request = APIRequest<Data>.get("/item")
        let leader = try await Self.lead(request, on: client)
        #expect(await cache.statistics.misses == 1)

        #expect(Self.isJoin(try Self.route(request, on: client)))
        #expect(Self.provenMisses(cache) == 1, "the joiner took the proof of its leader's lookup")
        #expect(await cache.statistics.misses == 2, "and counted the miss its lookup would have counted")
        #expect(client.metrics.cacheMisses == 2)

        await gate.open()
        try await leader.value
        #expect(transport.callCount == 1)
        #expect(await cache.count == 1)
    }

    @Test func concurrentJoinersCountOneMissEachAsLookupsWould() async throws {
        let gate = CoalescerTestKit.Gate()
        let cache = ResponseCache()
        let (client, transport) = Self.client(gate, cache: cache)
        let request = APIRequest<Data>.get("/item")
        let leader = try await Self.lead(request, on: client)
        let joiners = 50
        let calls = (0..<joiners).map { _ in Task { try await client.send(request) } }
        try await CoalescerTestKit.waitForWaiters(joiners + 1, on: client.coalescer)

        await gate.open()
        try await leader.value
        for call in calls { #expect(try await call.value.source == .network) }
        #expect(transport.callCount == 1)
        #expect(client.metrics.joined == joiners)
        #expect(Self.provenMisses(cache) == joiners)
        #expect(await cache.statistics.misses == joiners + 1)
        #expect(client.metrics.cacheMisses == joiners + 1)
    }

    @Test func aResponseStoredWhileTheFlightIsInTheAirIsServedFromTheCache() async throws {
        let gate = CoalescerTestKit.Gate()
        let cache = ResponseCache()
        let (client, transport) = Self.client(gate, cache: cache)
        let request = APIRequest<Data>.get("/item")
        let leader = try await Self.lead(request, on: client)
        // Stored for the same URL after the leader found nothing: the proof no longer holds.
        let stored = TransportResponse(
            statusCode: 200, headers: ["Cache-Control": "max-age=3600"], body: Data("stored".utf8))
        let now = Date()
        let url = Self.baseURL.appending(path: "item")
        #expect(
            await cache.store(
                stored, for: TransportRequest(url: url), partition: nil, requestTime: now, responseTime: now))

        guard case .answered(let exchange) = try Self.route(request, on: client) else {
            Issue.record("a fresh stored response must answer, not the flight in the air")
            await gate.open()
            return
        }
        #expect(exchange.source == .cache)
        #expect(exchange.response.body == Data("stored".utf8))
        #expect(Self.provenMisses(cache) == 0)

        await gate.open()
        try await leader.value
        #expect(transport.callCount == 1)
    }

    @Test func aCallThatMayNotUseTheNetworkNeverJoins() async throws {
        let gate = CoalescerTestKit.Gate()
        let cache = ResponseCache()
        let (client, _) = Self.client(gate, cache: cache)
        let leader = try await Self.lead(.get("/item"), on: client)

        let offline = APIRequest<Data>(path: "/item", cachePolicy: .onlyIfCached)
        let error = try #require(throws: APIError.self) { _ = try Self.route(offline, on: client) }
        guard case .notCached = error else {
            Issue.record("expected notCached, got \(error)")
            await gate.open()
            return
        }
        // A call that reads the cache past its rules counts no miss of its own when it joins.
        let reloading = APIRequest<Data>(path: "/item", cachePolicy: .reloadIgnoringCache)
        let missesBefore = await cache.statistics.misses
        #expect(Self.isJoin(try Self.route(reloading, on: client)))
        #expect(await cache.statistics.misses == missesBefore)
        #expect(Self.provenMisses(cache) == 0)

        await gate.open()
        try await leader.value
    }

    @Test func withoutACacheACallThatMayNotUseTheNetworkStillFailsInsteadOfJoining() async throws {
        let gate = CoalescerTestKit.Gate()
        let (client, _) = Self.client(gate, cache: nil)
        let leader = try await Self.lead(.get("/item"), on: client)

        #expect(Self.isJoin(try Self.route(.get("/item"), on: client)), "a plain call joins without a plan")
        let offline = APIRequest<Data>(path: "/item", cachePolicy: .onlyIfCached)
        let error = try #require(throws: APIError.self) { _ = try Self.route(offline, on: client) }
        guard case .notCached = error else {
            Issue.record("expected notCached, got \(error)")
            await gate.open()
            return
        }
        #expect(client.metrics.cacheMisses == 0, "no cache, no lookup, no miss")

        await gate.open()
        try await leader.value
    }

    @Test func aCacheWithADiskTierIsAskedByEveryJoiner() async throws {
        let directory = TemporaryDirectory()
        let gate = CoalescerTestKit.Gate()
        let cache = try ResponseCache(directory: directory.url)
        let (client, _) = Self.client(gate, cache: cache)
        let request = APIRequest<Data>.get("/item")
        let leader = try await Self.lead(request, on: client)

        #expect(Self.isJoin(try Self.route(request, on: client)), "the joiner still joins, after its lookup")
        #expect(Self.provenMisses(cache) == 0, "a miss in memory proves nothing about the directory")
        #expect(await cache.statistics.misses == 2)

        await gate.open()
        try await leader.value
    }
}
