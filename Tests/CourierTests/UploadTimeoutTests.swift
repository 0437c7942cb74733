import Foundation
import Testing

@testable import Courier

/// While a streamed request body is sent, the attempt's `timeout` restarts each time the transport reads a chunk of
/// it: it bounds each wait for the transport to take more, then the wait for the head after the last chunk, never
/// the upload as a whole (which failed a slow 1 GiB upload after the default 60 s). Time is the client's manual
/// clock.
@Suite(.timeLimit(.minutes(1))) struct UploadTimeoutTests {
    /// Reads the whole streamed body, chunk by chunk, then answers `200`.
    private final class ReadingTransport: HTTPTransport {
        private let reads = Locked(0)

        /// Chunks read so far.
        var chunksRead: Int { reads.withLock { $0 } }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            TransportResponse(statusCode: 500)
        }

        func stream(_ request: TransportRequest) async throws -> StreamedTransportResponse {
            let chunks = try #require(request.streamedBody).makeChunks()
            while try await chunks.nextChunk() != nil { reads.withLock { $0 += 1 } }
            return StreamedTransportResponse(statusCode: 200, body: ByteStream(Data("stored".utf8)))
        }
    }

    private static let timeout = Duration.seconds(10)

    private func client(_ transport: ReadingTransport, clock: TestClock) -> APIClient {
        APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(
                transport: transport, cache: nil, retryPolicy: .never, timeout: Self.timeout, clock: clock))
    }

    /// Returns once the transport has read `count` chunks; bounded, so a transport that never reads fails the test.
    private func waitForReads(_ count: Int, by transport: ReadingTransport) async throws {
        for _ in 0..<100_000 where transport.chunksRead < count { await Task.yield() }
        try #require(transport.chunksRead == count)
    }

    /// Returns once the client's deadline timer sleeps on `clock`; bounded, so a call that already ended (no timer)
    /// fails the test instead of hanging it.
    private func waitForTimer(on clock: TestClock) async throws {
        for _ in 0..<100_000 where clock.pendingSleeps.isEmpty { await Task.yield() }
        try #require(!clock.pendingSleeps.isEmpty, "no deadline timer: the call ended early")
    }

    @Test func anUploadWhoseBytesKeepFlowingOutlastsItsTimeout() async throws {
        let clock = TestClock()
        let transport = ReadingTransport()
        let client = client(transport, clock: clock)
        let feed = ChunkFeed()
        let upload = client.upload(
            APIRequest<Void>.post("/files"), body: StreamedBody(length: nil, chunks: ByteStream(next: feed.next)))
        // Three chunks 8 s apart: 24 s in all, past the 10 s timeout, but never 10 s without the transport reading.
        for chunk in 1...3 {
            feed.send("chunk \(chunk)")
            try await waitForReads(chunk, by: transport)
            try await waitForTimer(on: clock)
            clock.advance(by: .seconds(8))
        }
        feed.finish()
        let response = try await upload.value
        #expect(response.statusCode == 200)
        #expect(response.data == Data("stored".utf8))
        #expect(client.deadlines.pendingCount == 0)
    }

    @Test func anUploadWhoseTransportStopsReadingTimesOut() async throws {
        let clock = TestClock()
        let transport = ReadingTransport()
        let client = client(transport, clock: clock)
        let feed = ChunkFeed()
        let upload = client.upload(
            APIRequest<Void>.post("/files"), body: StreamedBody(length: nil, chunks: ByteStream(next: feed.next)))
        feed.send("chunk 1")
        try await waitForReads(1, by: transport)
        try await waitForTimer(on: clock)
        clock.advance(by: .seconds(8))
        feed.send("chunk 2")
        try await waitForReads(2, by: transport)
        // 10 s with nothing read: the deadline, restarted by the second chunk, passes.
        clock.advance(by: Self.timeout)
        let error = await #expect(throws: APIError.self) { try await upload.value }
        guard case .timedOut(let after) = error else {
            Issue.record("expected timedOut, got \(String(describing: error))")
            return
        }
        #expect(after == Self.timeout)
        await feed.abandoned()
    }
}
