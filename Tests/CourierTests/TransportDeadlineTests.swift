import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Deadlines handed to the transport: `URLSessionTransport` stops an attempt itself when its deadline passes (no
/// task per attempt), while it waits for a connection slot or while its URLSession task runs; any other transport
/// gets the default race.
@Suite(.timeLimit(.minutes(1))) struct TransportDeadlineTests {
    /// A transport that enforces deadlines itself, recording the deadline of every attempt.
    private final class DeadlineRecordingTransport: HTTPTransport {
        let timeouts = Locked<[Duration]>([])

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            Issue.record("the client should call send(_:deadline:)")
            return TransportResponse(statusCode: 500)
        }

        func send(_ request: TransportRequest, deadline: TransportDeadline) async throws -> TransportResponse {
            timeouts.withLock { $0.append(deadline.timeout) }
            return TransportResponse(statusCode: 200, body: Data("ok".utf8))
        }
    }

    @Test func theClientHandsEachAttemptItsDeadline() async throws {
        let transport = DeadlineRecordingTransport()
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(transport: transport, cache: nil, timeout: .seconds(7), clock: TestClock()))
        _ = try await client.send(APIRequest<Data>.get("/a"))
        var request = APIRequest<Data>.get("/b")
        request.timeout = .seconds(3)
        _ = try await client.send(request)
        #expect(transport.timeouts.withLock { $0 } == [.seconds(7), .seconds(3)])
    }

    @Test func urlSessionStopsARunningTaskAtItsDeadline() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/stall") { _ in .stall }
        let clock = TestClock()
        let transport = URLSessionTransport()
        let client = APIClient(
            baseURL: server.baseURL,
            configuration: .init(
                transport: transport, cache: nil, retryPolicy: .never, timeout: .seconds(5), clock: clock))

        let call = Task { try await client.send(APIRequest<Void>.get("/stall")) }
        await server.waitForHits("/stall", count: 1)
        await clock.waitForSleeper(of: .seconds(5))
        clock.advance(by: .seconds(5))

        let error = await #expect(throws: APIError.self) { try await call.value }
        guard case .timedOut(let timeout)? = error else {
            Issue.record("expected timedOut, got \(String(describing: error))")
            return
        }
        #expect(timeout == .seconds(5))
        // The task was stopped, so its connection slot comes back.
        let host = ConnectionGate.key(for: server.baseURL)
        #expect(await ReliabilityKit.poll { transport.gate.counts(for: host) == (admitted: 0, queued: 0) })
    }

    @Test func aRequestQueuedForAConnectionSlotLeavesTheQueueAtItsDeadline() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/stall") { _ in .stall }
        let configuration = URLSessionTransport.defaultConfiguration
        configuration.httpMaximumConnectionsPerHost = 1
        let transport = URLSessionTransport(configuration: configuration)
        let clock = TestClock()
        let client = APIClient(
            baseURL: server.baseURL,
            configuration: .init(
                transport: transport, cache: nil, retryPolicy: .never, timeout: .seconds(60), clock: clock))
        let host = ConnectionGate.key(for: server.baseURL)

        let first = Task { try await client.send(APIRequest<Void>.post("/stall")) }
        await server.waitForHits("/stall", count: 1)
        var queued = APIRequest<Void>.post("/stall")
        queued.timeout = .seconds(2)
        let second = Task { try await client.send(queued) }
        #expect(await ReliabilityKit.poll { transport.gate.counts(for: host) == (admitted: 1, queued: 1) })
        await clock.waitForSleeper(of: .seconds(2))
        clock.advance(by: .seconds(2))

        let error = await #expect(throws: APIError.self) { try await second.value }
        if case .timedOut(let timeout)? = error {
            #expect(timeout == .seconds(2))
        } else {
            Issue.record("expected timedOut, got \(String(describing: error))")
        }
        #expect(transport.gate.counts(for: host) == (admitted: 1, queued: 0))
        first.cancel()
        _ = await first.result
        #expect(await ReliabilityKit.poll { transport.gate.counts(for: host) == (admitted: 0, queued: 0) })
        #expect(server.hits("/stall") == 1, "the queued request was sent after its deadline")
    }
}
