import Foundation
import Testing

@testable import Courier

/// The attempt's `timeout` bounds each wait for the next chunk of a streamed body: a server that sends the head and
/// then falls silent fails the reader with `timedOut` instead of hanging it, and the transfer is stopped. Time is
/// the client's manual clock; the deadline's timer sleeps on it too, so each test waits for the client's idle
/// deadline to be registered (`waitForIdleDeadline`) before moving time on.
@Suite(.timeLimit(.minutes(1))) struct StreamIdleTimeoutTests {
    /// A transport whose every response is a `200` head followed by what `feed` sends, one chunk per `send`.
    private struct FeedTransport: HTTPTransport {
        let feed: ChunkFeed

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            TransportResponse(statusCode: 500)
        }

        func stream(_ request: TransportRequest) async throws -> StreamedTransportResponse {
            StreamedTransportResponse(statusCode: 200, body: ByteStream(next: feed.next))
        }
    }

    private static let timeout = Duration.seconds(10)

    private func client(_ transport: any HTTPTransport, base: URL, clock: TestClock) -> APIClient {
        APIClient(
            baseURL: base,
            configuration: .init(
                transport: transport, cache: nil, retryPolicy: .never, timeout: Self.timeout, clock: clock))
    }

    /// Returns once the client has registered a deadline (with no attempt in flight: the reader's idle deadline).
    private func waitForIdleDeadline(_ client: APIClient) async throws {
        while client.deadlines.pendingCount == 0 {
            try Task.checkCancellation()
            await Task.yield()
        }
    }

    @Test func aBodyThatFallsSilentAfterTheHeadFailsWithTimedOutAndStopsTheTransfer() async throws {
        let clock = TestClock()
        let feed = ChunkFeed()
        feed.send("first")
        let client = client(FeedTransport(feed: feed), base: URL(string: "https://api.example.com")!, clock: clock)
        let response = try await client.stream(APIRequest<Data>.get("/silent"))
        #expect(try await response.body.nextChunk() == Data("first".utf8))
        let stalled = Task { try await response.body.nextChunk() }
        try await waitForIdleDeadline(client)
        await clock.waitForSleeper { $0 <= Self.timeout }
        clock.advance(by: Self.timeout)
        let error = await #expect(throws: APIError.self) { try await stalled.value }
        guard case .timedOut(let after) = error else {
            Issue.record("expected timedOut, got \(String(describing: error))")
            return
        }
        #expect(after == Self.timeout)
        await feed.abandoned()
        // The stream stays ended: a later read gets the same error, not a hang.
        await #expect(throws: APIError.self) { try await response.body.nextChunk() }
        #expect(client.deadlines.pendingCount == 0)
    }

    @Test func onlyWaitingCountsAndEachChunkRestartsTheTimeout() async throws {
        let clock = TestClock()
        let feed = ChunkFeed()
        feed.send("a")
        let client = client(FeedTransport(feed: feed), base: URL(string: "https://api.example.com")!, clock: clock)
        let response = try await client.stream(APIRequest<Data>.get("/slow"))
        #expect(try await response.body.nextChunk() == Data("a".utf8))
        // The reader takes its time between chunks: far past the timeout, yet it never waited.
        clock.advance(by: .seconds(25))
        feed.send("b")
        #expect(try await response.body.nextChunk() == Data("b".utf8))
        // A wait of 8 s, then a chunk: within the timeout, counted from the start of this wait only.
        let third = Task { try await response.body.nextChunk() }
        try await waitForIdleDeadline(client)
        clock.advance(by: .seconds(8))
        feed.send("c")
        #expect(try await third.value == Data("c".utf8))
        // Another 8 s wait: 16 s since the previous wait began, which a deadline that was not restarted would end.
        let last = Task { try await response.body.nextChunk() }
        try await waitForIdleDeadline(client)
        clock.advance(by: .seconds(8))
        // The timer woke at the earlier deadlines and now sleeps towards this wait's (2 s on): nothing fired.
        await clock.waitForSleeper { $0 < Self.timeout }
        feed.finish()
        #expect(try await last.value == nil)
    }

    @Test func aDownloadWhoseServerFallsSilentTimesOutAndLeavesNoFile() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let feed = ChunkFeed()
        feed.send(Data(repeating: 7, count: 1000))
        server.route("/stalls") { _ in .streamed(next: feed.next) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("stalls.bin")
        let clock = TestClock()
        let client = client(URLSessionTransport(), base: server.baseURL, clock: clock)
        let download = client.download(APIRequest<Void>.get("/stalls"), to: destination)
        var progress = download.progress.makeAsyncIterator()
        while let update = await progress.next(), update.completedBytes < 1000 {}
        try await waitForIdleDeadline(client)
        await clock.waitForSleeper { $0 <= Self.timeout }
        clock.advance(by: Self.timeout)
        let error = await #expect(throws: APIError.self) { try await download.value }
        guard case .timedOut(let after) = error else {
            Issue.record("expected timedOut, got \(String(describing: error))")
            return
        }
        #expect(after == Self.timeout)
        await feed.abandoned()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func aSilentEventStreamReconnectsWithLastEventID() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let first = ChunkFeed()
        first.send("id: 1\ndata: one\n\n")
        let second = ChunkFeed()
        second.send("id: 2\ndata: two\n\n")
        server.routeEventStream("/events", first: first, then: second)
        let clock = TestClock()
        let client = client(URLSessionTransport(), base: server.baseURL, clock: clock)
        var events = client.serverSentEvents(APIRequest<Data>.get("/events")).makeAsyncIterator()
        #expect(try await events.next()?.data == "one")
        let reconnected = Task {
            try await waitForIdleDeadline(client)
            await clock.waitForSleeper { $0 <= Self.timeout }
            clock.advance(by: Self.timeout)
            // The silent connection timed out; the stream waits its reconnection delay (3 s) and connects again.
            await clock.waitForSleeper(of: .seconds(3))
            clock.advance(by: .seconds(3))
        }
        #expect(try await events.next() == ServerSentEvent(data: "two", lastEventID: "2"))
        try await reconnected.value
        await first.abandoned()
        #expect(server.requests.map { $0.header("Last-Event-ID") } == [nil, "1"])
    }
}
