import Foundation
import Testing

@testable import Courier

private typealias Kit = CoalescerTestKit

struct CoalescedItem: Codable, Equatable, Sendable {
    let id: Int
}

/// A transport whose calls wait at a gate until the test opens it, and which notes cancellation.
private func gatedTransport(_ gate: Kit.Gate, cancelled: Locked<Int> = Locked(0)) -> MockTransport {
    MockTransport { request, index in
        guard await gate.wait() else {
            cancelled.withLock { $0 += 1 }
            throw CancellationError()
        }
        return TransportResponse(
            statusCode: 200, headers: ["Content-Type": "application/json"],
            body: Data(#"{"id":\#(index)}"#.utf8))
    }
}

private func makeClient(_ transport: MockTransport, retryPolicy: RetryPolicy = .never) -> APIClient {
    APIClient(
        baseURL: URL(string: "https://api.example.com")!,
        configuration: .init(transport: transport, retryPolicy: retryPolicy, clock: TestClock()))
}

@Suite(.timeLimit(.minutes(1))) struct APIClientCoalescingTests {
    @Test func aThousandIdenticalGetsSendOneRequest() async throws {
        let gate = Kit.Gate()
        let transport = gatedTransport(gate)
        let client = makeClient(transport)
        let calls = (0..<1_000).map { _ in Task { try await client.send(APIRequest<CoalescedItem>.get("/me")) } }
        try await Kit.waitForWaiters(1_000, on: client.coalescer)
        await gate.open()
        var responses: [APIResponse<CoalescedItem>] = []
        for call in calls { responses.append(try await call.value) }
        #expect(transport.callCount == 1)
        #expect(responses.allSatisfy { $0.value == CoalescedItem(id: 0) })
        #expect(responses.filter(\.joined).count == 999)
        #expect(await client.coalescer.flightCount == 0)
    }

    @Test(arguments: [
        (APIRequest<CoalescedItem>.get("/a"), APIRequest<CoalescedItem>.get("/b")),
        (
            APIRequest<CoalescedItem>.get("/a", headers: ["Accept": "application/json"]),
            APIRequest<CoalescedItem>.get("/a")
        ),
        (
            APIRequest<CoalescedItem>.get("/a", headers: ["Accept-Language": "fr"]),
            APIRequest<CoalescedItem>.get("/a", headers: ["Accept-Language": "de"])
        ),
        (
            APIRequest<CoalescedItem>.get("/a", headers: ["Authorization": "Bearer alice"]),
            APIRequest<CoalescedItem>.get("/a", headers: ["Authorization": "Bearer bob"])
        ),
        (
            APIRequest<CoalescedItem>.get("/a", query: [URLQueryItem(name: "page", value: "1")]),
            APIRequest<CoalescedItem>.get("/a")
        ),
        (APIRequest<CoalescedItem>.head("/a"), APIRequest<CoalescedItem>.get("/a")),
    ])
    func differentRequestsFlySeparately(first: APIRequest<CoalescedItem>, second: APIRequest<CoalescedItem>)
        async throws
    {
        let gate = Kit.Gate()
        let transport = gatedTransport(gate)
        let client = makeClient(transport)
        let calls = [first, first, second, second].map { request in Task { try await client.send(request) } }
        try await Kit.waitForWaiters(4, on: client.coalescer)
        #expect(await client.coalescer.flightCount == 2)
        await gate.open()
        var joined = 0
        for call in calls where try await call.value.joined { joined += 1 }
        #expect(transport.callCount == 2)
        #expect(joined == 2)
    }

    @Test func oneOfTenCancellingLeavesNineSuccessesAndOneCall() async throws {
        let gate = Kit.Gate()
        let transport = gatedTransport(gate)
        let client = makeClient(transport)
        let calls = (0..<10).map { _ in Task { try await client.send(APIRequest<CoalescedItem>.get("/me")) } }
        try await Kit.waitForWaiters(10, on: client.coalescer)
        calls[3].cancel()
        try await Kit.waitForWaiters(9, on: client.coalescer)
        await gate.open()
        var successes = 0
        var cancellations = 0
        for call in calls {
            do {
                _ = try await call.value
                successes += 1
            } catch is CancellationError {
                cancellations += 1
            }
        }
        #expect(successes == 9)
        #expect(cancellations == 1)
        #expect(transport.callCount == 1)
    }

    @Test func whenAllTenCancelTheTransportCallIsCancelled() async throws {
        let gate = Kit.Gate()
        let cancelled = Locked(0)
        let transport = gatedTransport(gate, cancelled: cancelled)
        let client = makeClient(transport)
        let calls = (0..<10).map { _ in Task { try await client.send(APIRequest<CoalescedItem>.get("/me")) } }
        try await Kit.waitForWaiters(10, on: client.coalescer)
        for call in calls { call.cancel() }
        for call in calls { #expect(await Kit.endedInCancellation(call)) }
        #expect(await Kit.eventually { cancelled.withLock { $0 } == 1 })
        #expect(transport.callCount == 1)
        #expect(await client.coalescer.flightCount == 0)
    }

    @Test func retriesHappenOnceInsideTheSharedFlight() async throws {
        let gate = Kit.Gate()
        let transport = MockTransport { _, index in
            _ = await gate.wait()
            return index == 0 ? .text(503) : .text(200, #"{"id":42}"#)
        }
        let clock = TestClock()
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(transport: transport, retryPolicy: RetryPolicy(jitter: .none), clock: clock))
        let calls = (0..<100).map { _ in Task { try await client.send(APIRequest<CoalescedItem>.get("/me")) } }
        try await Kit.waitForWaiters(100, on: client.coalescer)
        await gate.open()
        await clock.waitForSleeper(of: .milliseconds(500))
        clock.advance(by: .milliseconds(500))
        for call in calls {
            let response = try await call.value
            #expect(response.value == CoalescedItem(id: 42))
            #expect(response.attempts == 2)
        }
        #expect(transport.callCount == 2)
    }

    @Test func unsafeMethodsAndOptOutsAreNotCoalesced() async throws {
        let gate = Kit.Gate()
        let transport = gatedTransport(gate)
        let client = makeClient(transport)
        let posts = (0..<3).map { _ in
            Task { try await client.send(APIRequest<CoalescedItem>.post("/search", body: CoalescedItem(id: 1))) }
        }
        var optedOut = APIRequest<CoalescedItem>.get("/me")
        optedOut.coalescing = .never
        let gets = (0..<3).map { _ in Task { [optedOut] in try await client.send(optedOut) } }
        #expect(await Kit.eventually { transport.callCount == 6 })
        #expect(await client.coalescer.flightCount == 0)
        await gate.open()
        for call in posts + gets { #expect(try await call.value.joined == false) }
    }

    @Test func aPostCanOptInAndDifferentBodiesStayApart() async throws {
        let gate = Kit.Gate()
        let transport = gatedTransport(gate)
        let client = makeClient(transport)
        func query(_ id: Int) -> APIRequest<CoalescedItem> {
            var request = APIRequest<CoalescedItem>.post("/graphql", body: CoalescedItem(id: id))
            request.coalescing = .always
            return request
        }
        let calls = [query(1), query(1), query(1), query(2)].map { request in Task { try await client.send(request) } }
        try await Kit.waitForWaiters(4, on: client.coalescer)
        #expect(await client.coalescer.flightCount == 2)
        await gate.open()
        for call in calls { _ = try await call.value }
        #expect(transport.callCount == 2)
    }

    @Test func coalescingCanBeTurnedOffForTheClient() async throws {
        let gate = Kit.Gate()
        let transport = gatedTransport(gate)
        var configuration = APIClient.Configuration(transport: transport, retryPolicy: .never, clock: TestClock())
        configuration.isCoalescingEnabled = false
        let client = APIClient(baseURL: URL(string: "https://api.example.com")!, configuration: configuration)
        let calls = (0..<5).map { _ in Task { try await client.send(APIRequest<CoalescedItem>.get("/me")) } }
        #expect(await Kit.eventually { transport.callCount == 5 })
        await gate.open()
        for call in calls { #expect(try await call.value.joined == false) }
    }

    @Test func anErrorIsSharedButNotRemembered() async throws {
        let gate = Kit.Gate()
        let transport = MockTransport { _, index in
            _ = await gate.wait()
            return index == 0 ? .text(500, "boom") : .text(200, #"{"id":7}"#)
        }
        let client = makeClient(transport)
        let calls = (0..<20).map { _ in Task { try await client.send(APIRequest<CoalescedItem>.get("/me")) } }
        try await Kit.waitForWaiters(20, on: client.coalescer)
        await gate.open()
        for call in calls {
            await #expect(throws: APIError.self) { try await call.value }
        }
        #expect(try await client.send(APIRequest<CoalescedItem>.get("/me")).value == CoalescedItem(id: 7))
        #expect(transport.callCount == 2)
    }
}
