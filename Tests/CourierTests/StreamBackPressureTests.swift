import Foundation
import Testing

@testable import Courier

/// A streamed body's reader that lags never holds up the rest of the process: on Linux, URLSession runs every
/// session's libcurl work on one shared queue, so a streamed exchange never waits there for its reader.
@Suite(.timeLimit(.minutes(1))) struct StreamBackPressureTests {
    private func get(_ server: TestServer, _ path: String) -> TransportRequest {
        TransportRequest(url: server.baseURL.appendingPathComponent(path))
    }

    @Test func theProducerIsNeverHeldBackInsideURLSessionsQueue() {
        var buffer = StreamingBuffer(
            limit: URLSessionTransport.streamBufferBytes, pauseAt: URLSessionStreamingExchange.pauseAt)
        let chunk = Data(repeating: 3, count: 64 << 10)
        var held = 0
        for _ in 0..<(3 * URLSessionTransport.streamPauseBytes / chunk.count) {
            if case .pause = buffer.push(chunk) { held += 1 }
        }
        #if canImport(FoundationNetworking)
            #expect(held == 0, "the delivery callback was told to hold libcurl back")
        #else
            #expect(held == 1, "the task is suspended once, at the pause mark")
        #endif
    }

    @Test func aParkedStreamReaderNeverHoldsUpAnotherRequestOfTheTransport() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let chunk = Data(repeating: 7, count: 64 << 10)
        let total = 3 * URLSessionTransport.streamPauseBytes
        let head = Data("HTTP/1.1 200 OK\r\nContent-Length: \(total)\r\n\r\n".utf8)
        server.route("/big") { _ in .repeated(head: head, chunk: chunk, count: total / chunk.count) }
        server.route("/plain") { _ in .text("ok") }
        let transport = URLSessionTransport()

        let streamed = try await transport.stream(get(server, "/big"))
        // Nobody reads the stream: the client takes the whole body anyway (it is within the buffer's limit), so the
        // server gets to send all of it, and a plain request on the same transport completes meanwhile.
        #expect(await ReliabilityKit.poll { server.bytesSent >= head.count + total })
        let plain = try await transport.send(get(server, "/plain"))
        #expect(plain.statusCode == 200)
        #expect(String(decoding: plain.body, as: UTF8.self) == "ok")

        // The reader, parked until now, gets every byte.
        var received = 0
        for try await part in streamed.body {
            #expect(part.allSatisfy { $0 == 7 })
            received += part.count
        }
        #expect(received == total)
    }
}
