#if AsyncHTTPClient
    import CourierAsyncHTTPClient
    import CourierTesting
    import Foundation
    import Testing

    @testable import Courier

    /// The request's timeout bounds each wait for the next chunk of a streamed body over this transport too: a server
    /// that sends the head and some bytes, then falls silent, fails the download with `timedOut`, and the connection is
    /// closed. Time is the client's manual clock.
    @Suite("AsyncHTTPClientTransport: idle timeout of a streamed body", .timeLimit(.minutes(1)))
    struct IdleTimeoutTests {
        @Test func aDownloadWhoseServerFallsSilentTimesOutClosesTheConnectionAndLeavesNoFile() async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                let clock = ManualClock()
                let timeout = Duration.seconds(10)
                let client = APIClient(
                    baseURL: server.baseURL,
                    configuration: .init(
                        transport: transport, cache: nil, retryPolicy: .never, timeout: timeout, clock: clock))
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "courier-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: directory) }
                // `/stall` sends its head and 64 KiB of a 10 MB body, then nothing.
                let download = client.download(
                    APIRequest<Void>.get("/stall"), to: directory.appendingPathComponent("a"))
                var progress = download.progress.makeAsyncIterator()
                while let update = await progress.next(), update.completedBytes < 65536 {}
                // The reader now waits for the next chunk: its idle deadline is the client's only one.
                while client.deadlines.pendingCount == 0 {
                    try Task.checkCancellation()
                    await Task.yield()
                }
                await clock.waitForSleeper { $0 <= timeout }
                clock.advance(by: timeout)
                let error = await #expect(throws: APIError.self) { try await download.value }
                guard case .timedOut(let after) = error else {
                    Issue.record("expected timedOut, got \(String(describing: error))")
                    return
                }
                #expect(after == timeout)
                #expect(await server.log.first { $0 == .closedEarly(path: "/stall") } == .closedEarly(path: "/stall"))
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
                try await transport.shutdown()
            }
        }
    }
#endif
