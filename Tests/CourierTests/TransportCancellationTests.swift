import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Cancellation through `URLSessionTransport` over real sockets: a cancelled unsafe request never reaches the
/// server after its caller left, and only a caller's own cancellation reads as `CancellationError`.
@Suite(.timeLimit(.minutes(1))) struct TransportCancellationTests {
    /// Every URLSession task of `session` has completed (bounded: gives up after about 20 s).
    private static func sessionIsIdle(_ session: URLSession) async -> Bool {
        await ReliabilityKit.poll {
            await withCheckedContinuation { continuation in
                session.getAllTasks { continuation.resume(returning: $0.isEmpty) }
            }
        }
    }

    @Test func aHundredCancelledPostsToASilentServerSendNothingAfterTheirCallersLeft() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("POST", "/orders") { _ in .stall }
        let transport = URLSessionTransport()
        let limit = transport.session.configuration.httpMaximumConnectionsPerHost
        let client = APIClient(
            baseURL: server.baseURL,
            configuration: .init(transport: transport, cache: nil, retryPolicy: .never, clock: TestClock()))

        let calls = (0..<100).map { index in
            Task { try await client.send(APIRequest<Void>.post("/orders", body: ["order": index])) }
        }
        await server.waitForHits("/orders", count: limit)
        // Every caller is in place, as in the issue: `limit` requests inside URLSession, the rest queued in Courier.
        let host = ConnectionGate.key(for: server.baseURL)
        #expect(
            await ReliabilityKit.poll { transport.gate.counts(for: host) == (admitted: limit, queued: 100 - limit) })
        // Every caller leaves, those still queued in Courier first. A slot freed by a cancelled request goes at once
        // to the longest-waiting caller still there, and starts its request: a caller cancelled after that moment had
        // rightly been sent. Leaving queued callers first makes "nobody is waiting" true before any slot frees, so
        // the count below is exact; URLSession parking requests (the bug) would still send them when slots free.
        let sent = Set(
            server.requests.filter { $0.path == "/orders" }
                .compactMap { try? JSONDecoder().decode([String: Int].self, from: $0.body)["order"] })
        #expect(sent.count == limit)
        for (index, call) in calls.enumerated() where !sent.contains(index) { call.cancel() }
        for (index, call) in calls.enumerated() where sent.contains(index) { call.cancel() }
        var cancelled = 0
        for call in calls {
            if case .failure(let error) = await call.result, error is CancellationError { cancelled += 1 }
        }
        let receivedWhenAllLeft = server.hits("/orders")

        // Nothing is left that could still send, and the server has read everything that reached it.
        #expect(await Self.sessionIsIdle(transport.session))
        #expect(await ReliabilityKit.poll { server.openConnections == 0 })
        #expect(cancelled == 100)
        #expect(receivedWhenAllLeft == limit)
        #expect(server.hits("/orders") == receivedWhenAllLeft, "POSTs sent after every caller had left")
        #expect(await ReliabilityKit.poll { transport.gate.counts(for: host) == (admitted: 0, queued: 0) })
        ReliabilityKit.record(
            "fault", "100 POSTs to a silent server (6 connections per host), every caller cancelled", cases: 100,
            outcome: "6 sent before the callers left, none after; 94 dropped from Courier's queue unsent")
    }

    @Test func aCallerWhoCancelsGetsCancellationError() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/stall") { _ in .stall }
        let transport = URLSessionTransport()

        let call = Task {
            try await transport.send(TransportRequest(method: .get, url: server.baseURL.appending(path: "stall")))
        }
        await server.waitForHits("/stall", count: 1)
        call.cancel()

        await #expect(throws: CancellationError.self) { try await call.value }
    }

    @Test func aCallerCancelledBeforeItSendsTakesNoSlotAndSendsNothing() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/stall") { _ in .stall }
        let transport = URLSessionTransport()
        let host = ConnectionGate.key(for: server.baseURL)

        let call = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await transport.send(
                TransportRequest(method: .get, url: server.baseURL.appending(path: "stall")))
        }
        await #expect(throws: CancellationError.self) { try await call.value }
        #expect(transport.gate.counts(for: host) == (admitted: 0, queued: 0))
        #expect(await Self.sessionIsIdle(transport.session))
        #expect(server.hits("/stall") == 0)
    }

    @Test(arguments: [false, true])
    func anInvalidatedSessionIsATransportFailureForACallerWhoNeverCancelled(ownSession: Bool) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/stall") { _ in .stall }
        let transport =
            ownSession
            ? URLSessionTransport()
            : URLSessionTransport(session: URLSession(configuration: URLSessionTransport.defaultConfiguration))

        let call = Task {
            try await transport.send(TransportRequest(method: .get, url: server.baseURL.appending(path: "stall")))
        }
        await server.waitForHits("/stall", count: 1)
        transport.session.invalidateAndCancel()

        let error = await #expect(throws: APIError.self) { try await call.value }
        guard case .transport(.other, let cause)? = error else {
            Issue.record("expected transport(.other), got \(String(describing: error))")
            return
        }
        #expect((cause as? URLError)?.code == .cancelled)
    }
}
