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

    /// A client whose call of `/item` leads a flight that the transport holds until ``land()``.
    private struct HeldFlight {
        let gate = CoalescerTestKit.Gate()
        let client: APIClient
        let transport: MockTransport
        let leader: Task<Void, any Error>

        init(cache: ResponseCache?) async throws {
            let gate = gate
            transport = MockTransport { _, index in
                _ = await gate.wait()
                return .text(200, "answer \(index)", headers: ["Cache-Control": "max-age=3600"])
            }
            let client = APIClient(
                baseURL: JoiningWithoutALookupTests.baseURL,
                configuration: .init(transport: transport, cache: cache, retryPolicy: .never))
            self.client = client
            leader = Task { _ = try await client.send(APIRequest<Data>.get("/item")) }
            try await CoalescerTestKit.waitForWaiters(1, on: client.coalescer)
        }

        /// Lets the flight answer, and waits for its leader.
        func land() async throws {
            await gate.open()
            try await leader.value
        }
    }

    @Test func aJoinerOfAFlightWhoseLeaderFoundNothingStoredSkipsItsLookupAndCountsItsMiss() async throws {
        let cache = ResponseCache()
        let flight = try await HeldFlight(cache: cache)
        let (client, transport) = (flight.client, flight.transport)
        let request = APIRequest<Data>.get("/item")
        #expect(await cache.statistics.misses == 1)

        #expect(Self.isJoin(try Self.route(request, on: client)))
        #expect(Self.provenMisses(cache) == 1, "the joiner took the proof of its leader's lookup")
        #expect(await cache.statistics.misses == 2, "and counted the miss its lookup would have counted")
        #expect(client.metrics.cacheMisses == 2)

        try await flight.land()
        #expect(transport.callCount == 1)
        #expect(await cache.count == 1)
    }

    @Test func concurrentJoinersCountOneMissEachAsLookupsWould() async throws {
        let cache = ResponseCache()
        let flight = try await HeldFlight(cache: cache)
        let (client, transport) = (flight.client, flight.transport)
        let request = APIRequest<Data>.get("/item")
        let joiners = 50
        let calls = (0..<joiners).map { _ in Task { try await client.send(request) } }
        try await CoalescerTestKit.waitForWaiters(joiners + 1, on: client.coalescer)

        try await flight.land()
        for call in calls { #expect(try await call.value.source == .network) }
        #expect(transport.callCount == 1)
        #expect(client.metrics.joined == joiners)
        #expect(Self.provenMisses(cache) == joiners)
        #expect(await cache.statistics.misses == joiners + 1)
        #expect(client.metrics.cacheMisses == joiners + 1)
    }

    @Test func aResponseStoredWhileTheFlightIsInTheAirIsServedFromTheCache() async throws {
        let cache = ResponseCache()
        let flight = try await HeldFlight(cache: cache)
        let (client, transport) = (flight.client, flight.transport)
        let request = APIRequest<Data>.get("/item")
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
            try await flight.land()
            return
        }
        #expect(exchange.source == .cache)
        #expect(exchange.response.body == Data("stored".utf8))
        #expect(Self.provenMisses(cache) == 0)

        try await flight.land()
        #expect(transport.callCount == 1)
    }

    @Test func aCallThatMayNotUseTheNetworkNeverJoins() async throws {
        let cache = ResponseCache()
        let flight = try await HeldFlight(cache: cache)
        let client = flight.client

        let offline = APIRequest<Data>(path: "/item", cachePolicy: .onlyIfCached)
        let error = try #require(throws: APIError.self) { _ = try Self.route(offline, on: client) }
        guard case .notCached = error else {
            Issue.record("expected notCached, got \(error)")
            try await flight.land()
            return
        }
        // A call that reads the cache past its rules counts no miss of its own when it joins.
        let reloading = APIRequest<Data>(path: "/item", cachePolicy: .reloadIgnoringCache)
        let missesBefore = await cache.statistics.misses
        #expect(Self.isJoin(try Self.route(reloading, on: client)))
        #expect(await cache.statistics.misses == missesBefore)
        #expect(Self.provenMisses(cache) == 0)

        try await flight.land()
    }

    @Test func withoutACacheACallThatMayNotUseTheNetworkStillFailsInsteadOfJoining() async throws {
        let flight = try await HeldFlight(cache: nil)
        let client = flight.client

        #expect(Self.isJoin(try Self.route(.get("/item"), on: client)), "a plain call joins without a plan")
        let offline = APIRequest<Data>(path: "/item", cachePolicy: .onlyIfCached)
        let error = try #require(throws: APIError.self) { _ = try Self.route(offline, on: client) }
        guard case .notCached = error else {
            Issue.record("expected notCached, got \(error)")
            try await flight.land()
            return
        }
        #expect(client.metrics.cacheMisses == 0, "no cache, no lookup, no miss")

        try await flight.land()
    }

    @Test func aCacheWithADiskTierIsAskedByEveryJoiner() async throws {
        let directory = TemporaryDirectory()
        let cache = try ResponseCache(directory: directory.url)
        let flight = try await HeldFlight(cache: cache)
        let client = flight.client
        let request = APIRequest<Data>.get("/item")

        #expect(Self.isJoin(try Self.route(request, on: client)), "the joiner still joins, after its lookup")
        #expect(Self.provenMisses(cache) == 0, "a miss in memory proves nothing about the directory")
        #expect(await cache.statistics.misses == 2)

        try await flight.land()
    }
}
