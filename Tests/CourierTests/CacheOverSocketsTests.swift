import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A one-shot gate: tasks wait until it is opened.
private final class Gate: Sendable {
    private let state = Locked<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let open = state.withLock { state in
                if !state.open { state.waiters.append(continuation) }
                return state.open
            }
            if open { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

private func makeClient(_ server: TestServer, date: TestDate) -> APIClient {
    APIClient(
        baseURL: server.baseURL,
        configuration: .init(
            transport: URLSessionTransport(), cache: ResponseCache(), retryPolicy: .never, currentDate: { date.now }))
}

@Suite(.timeLimit(.minutes(1))) struct CacheOverSocketsTests {
    @Test func anETagRoundTripServesTheCachedBodyAfterA304() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("GET", "/doc") { request in
            if request.header("If-None-Match") == #""v1""# {
                return TestServer.Reply(status: 304, headers: [("ETag", #""v1""#), ("Cache-Control", "max-age=60")])
            }
            return .json(#"{"id":1}"#, headers: [("ETag", #""v1""#), ("Cache-Control", "max-age=60")])
        }
        let date = TestDate()
        let client = makeClient(server, date: date)

        let first = try await client.send(APIRequest<Data>.get("/doc"))
        #expect(first.source == .network)
        let second = try await client.send(APIRequest<Data>.get("/doc"))
        #expect(second.source == .cache)
        #expect(second.attempts == 0)
        #expect(server.hits("/doc") == 1)

        date.advance(by: 120)
        let third = try await client.send(APIRequest<Data>.get("/doc"))
        #expect(server.hits("/doc") == 2)
        #expect(server.requests.last?.header("If-None-Match") == #""v1""#)
        #expect(third.source == .revalidated)
        #expect(third.statusCode == 200)
        #expect(third.value == Data(#"{"id":1}"#.utf8))

        let fourth = try await client.send(APIRequest<Data>.get("/doc"))  // the 304 restarted the lifetime
        #expect(fourth.source == .cache)
        #expect(server.hits("/doc") == 2)
    }

    @Test func manyCallersOfAStaleEntrySendOneConditionalRequest() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let gate = Gate()
        server.route("GET", "/hot") { request in
            guard request.header("If-None-Match") != nil else {
                return .text("hot", headers: [("ETag", #""h""#), ("Cache-Control", "max-age=60")])
            }
            await gate.wait()
            return TestServer.Reply(status: 304, headers: [("ETag", #""h""#)])
        }
        let date = TestDate()
        let client = makeClient(server, date: date)
        _ = try await client.send(APIRequest<Data>.get("/hot"))
        date.advance(by: 61)

        let callers = 50
        let responses = try await withThrowingTaskGroup(of: APIResponse<Data>.self) { group in
            for _ in 0..<callers {
                group.addTask { try await client.send(APIRequest<Data>.get("/hot")) }
            }
            await server.waitForHits("/hot", count: 2)
            while await client.coalescer.waiterCount < callers { await Task.yield() }
            gate.open()
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(server.hits("/hot") == 2)
        #expect(server.requests.filter { $0.header("If-None-Match") == #""h""# }.count == 1)
        #expect(responses.allSatisfy { $0.source == .revalidated && $0.value == Data("hot".utf8) })
        #expect(responses.filter { !$0.joined }.count == 1)
        #expect(await client.configuration.cache?.statistics.revalidations == 1)
    }

    @Test func staleWhileRevalidateAnswersAtOnceAndRefreshesInTheBackground() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let version = Locked(0)
        server.route("GET", "/feed") { _ in
            let current = version.withLock { value in
                value += 1
                return value
            }
            return .text("v\(current)", headers: [("Cache-Control", "max-age=60, stale-while-revalidate=600")])
        }
        let date = TestDate()
        let client = makeClient(server, date: date)
        _ = try await client.send(APIRequest<Data>.get("/feed"))
        date.advance(by: 90)

        let stale = try await client.send(APIRequest<Data>.get("/feed"))
        #expect(stale.source == .staleWhileRevalidate)
        #expect(stale.value == Data("v1".utf8))
        await client.backgroundRefreshes.waitUntilIdle()
        #expect(server.hits("/feed") == 2)
        #expect(client.backgroundRefreshes.finishedCount == 1)

        let refreshed = try await client.send(APIRequest<Data>.get("/feed"))
        #expect(refreshed.source == .cache)
        #expect(refreshed.value == Data("v2".utf8))
    }
}
