import Foundation
import Testing

@testable import Courier

/// A stale response served under `stale-while-revalidate` is refreshed once per cache key at a time, however many
/// callers hit it and whether or not coalescing is on.
@Suite(.timeLimit(.minutes(1))) struct BackgroundRefreshTests {
    /// A client without coalescing whose transport answers the first request at once and holds every later one
    /// until `gate` opens. Responses are fresh for 60 s and may be served stale for 600 s more.
    private static func client(gate: CoalescerTestKit.Gate, date: TestDate) -> (APIClient, MockTransport) {
        let transport = MockTransport { request, index in
            if index > 0 { _ = await gate.wait() }
            return .text(
                200, "v\(index) \(request.url.path)",
                headers: ["Cache-Control": "max-age=60, stale-while-revalidate=600", "ETag": "\"v\(index)\""])
        }
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(
                transport: transport, retryPolicy: .never, isCoalescingEnabled: false, currentDate: { date.now }))
        return (client, transport)
    }

    @Test func twentyConcurrentStaleHitsWithCoalescingOffRevalidateOnce() async throws {
        let gate = CoalescerTestKit.Gate()
        let date = TestDate()
        let (client, transport) = Self.client(gate: gate, date: date)
        _ = try await client.send(APIRequest<Data>.get("/feed"))
        date.advance(by: 90)

        let responses = try await withThrowingTaskGroup(of: APIResponse<Data>.self) { group in
            for _ in 0..<20 { group.addTask { try await client.send(APIRequest<Data>.get("/feed")) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        await gate.open()
        await client.backgroundRefreshes.waitUntilIdle()

        #expect(responses.count == 20)
        #expect(responses.allSatisfy { $0.source == .staleWhileRevalidate && $0.value == Data("v0 /feed".utf8) })
        #expect(transport.callCount == 2)
        #expect(transport.requests.last?.headers["If-None-Match"] == "\"v0\"")
        #expect(client.backgroundRefreshes.finishedCount == 1)
        #expect(client.backgroundRefreshes.skippedCount == 19)
    }

    @Test func aStaleHitAfterTheRefreshFinishedRefreshesAgain() async throws {
        let gate = CoalescerTestKit.Gate()
        await gate.open()
        let date = TestDate()
        let (client, transport) = Self.client(gate: gate, date: date)
        _ = try await client.send(APIRequest<Data>.get("/feed"))
        for round in 1...3 {
            date.advance(by: 90)
            let stale = try await client.send(APIRequest<Data>.get("/feed"))
            #expect(stale.source == .staleWhileRevalidate)
            await client.backgroundRefreshes.waitUntilIdle()
            #expect(transport.callCount == round + 1)
        }
        #expect(client.backgroundRefreshes.skippedCount == 0)
    }

    @Test func staleHitsOnDifferentURLsRefreshSeparately() async throws {
        let gate = CoalescerTestKit.Gate()
        let date = TestDate()
        let (client, transport) = Self.client(gate: gate, date: date)
        _ = try await client.send(APIRequest<Data>.get("/a"))
        await gate.open()
        _ = try await client.send(APIRequest<Data>.get("/b"))
        date.advance(by: 90)

        _ = try await client.send(APIRequest<Data>.get("/a"))
        _ = try await client.send(APIRequest<Data>.get("/b"))
        await client.backgroundRefreshes.waitUntilIdle()

        #expect(transport.callCount == 4)
        #expect(client.backgroundRefreshes.finishedCount == 2)
    }
}
