import Foundation
import Testing

@testable import Courier

/// ``URLSessionTransport/stream(_:)`` over real sockets: the head before the body, bounded buffering, cancellation
/// that reaches the server, streamed uploads, and the failures a stream can end with.
@Suite(.timeLimit(.minutes(1))) struct URLSessionStreamingTests {
    private func get(_ server: TestServer, _ path: String) -> TransportRequest {
        TransportRequest(url: server.baseURL.appendingPathComponent(path))
    }

    @Test func theHeadArrivesBeforeTheBodyAndChunksArriveAsTheServerSendsThem() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let feed = ChunkFeed()
        server.route("/live") { _ in .streamed(headers: [("X-Kind", "live")], next: feed.next) }
        let response = try await URLSessionTransport().stream(get(server, "/live"))
        // The server has sent no body byte yet: the head cannot have waited for it.
        #expect(response.statusCode == 200)
        #expect(response.headers["x-kind"] == "live")
        var iterator = response.body.makeAsyncIterator()
        for word in ["one", "two", "three"] {
            feed.send(word)
            var received = Data()
            while received.count < word.utf8.count, let chunk = try await iterator.next() { received.append(chunk) }
            #expect(String(decoding: received, as: UTF8.self) == word)
        }
        feed.finish()
        #expect(try await iterator.next() == nil)
    }

    @Test func aSlowReaderHoldsTheServerBackInsteadOfBufferingTheBody() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let total = 48 << 20
        let chunk = Data(repeating: 7, count: 64 << 10)
        server.route("/big") { _ in
            .repeated(
                head: Data("HTTP/1.1 200 OK\r\nContent-Length: \(total)\r\n\r\n".utf8), chunk: chunk,
                count: total / chunk.count)
        }
        let response = try await URLSessionTransport().stream(get(server, "/big"))
        var received = 0
        var widestGap = 0
        for try await part in response.body {
            received += part.count
            // Let the network run ahead of the reader as far as it can.
            for _ in 0..<20 { await Task.yield() }
            widestGap = max(widestGap, server.bytesSent - received)
        }
        #expect(received == total)
        // The transport's buffer (1 MiB) plus what the kernel's socket buffers hold; a buffering transport reads
        // the whole body (48 MiB) before the reader sees its first byte.
        #expect(widestGap < 16 << 20, "ran ahead by \(widestGap) bytes")
    }

    @Test func cancellingTheReaderStopsTheTransferAtTheServer() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let feed = ChunkFeed()
        server.route("/endless") { _ in .streamed(next: feed.next) }
        let response = try await URLSessionTransport().stream(get(server, "/endless"))
        feed.send("first")
        let reader = Task {
            var seen = 0
            for try await chunk in response.body { seen += chunk.count }
            return seen
        }
        reader.cancel()
        await #expect(throws: CancellationError.self) { try await reader.value }
        await feed.abandoned()
    }

    @Test func aBodyLetGoUnreadStopsTheTransfer() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let feed = ChunkFeed()
        server.route("/unread") { _ in .streamed(next: feed.next) }
        do {
            let response = try await URLSessionTransport().stream(get(server, "/unread"))
            #expect(response.statusCode == 200)
        }
        await feed.abandoned()
    }

    @Test func aResetMidBodyEndsTheStreamWithAConnectionError() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let feed = ChunkFeed()
        feed.send("partial")
        feed.finish()
        server.route("/broken") { _ in .streamed(ending: .reset, next: feed.next) }
        let response = try await URLSessionTransport().stream(get(server, "/broken"))
        let error = await #expect(throws: APIError.self) { try await response.body.collect(upTo: 1 << 20) }
        guard case .transport? = error else {
            Issue.record("expected a transport failure, got \(String(describing: error))")
            return
        }
    }

    @Test(arguments: [false, true])
    func anUnknownContentEncodingFailsNamingTheCoding(streamed: Bool) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/coded") { _ in
            TestServer.Reply(status: 200, headers: [("Content-Encoding", "unknown-coding")], body: Data("xyz".utf8))
        }
        let transport = URLSessionTransport()
        let error = await #expect(throws: APIError.self) {
            if streamed {
                _ = try await transport.stream(get(server, "/coded")).body.collect(upTo: 1 << 20)
            } else {
                _ = try await transport.send(get(server, "/coded"))
            }
        }
        guard case .invalidResponse(let reason, _)? = error else {
            Issue.record("expected invalidResponse, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("\"unknown-coding\""))
    }

    /// Chunked even with a known length: libcurl would otherwise send both framings.
    @Test(arguments: [true, false])
    func aStreamedBodyIsUploadedChunkedAndWhole(lengthKnown: Bool) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("POST", "/upload") { request in
            .text(
                "\(request.body.count) \(request.header("Content-Length") ?? "-") \(request.header("Transfer-Encoding") ?? "-")"
            )
        }
        let parts = (0..<40).map { Data(repeating: UInt8($0), count: 10_000) }
        var request = TransportRequest(method: .post, url: server.baseURL.appendingPathComponent("upload"))
        let remaining = Locked(parts)
        request.streamedBody = StreamedBody(
            length: lengthKnown ? 400_000 : nil,
            chunks: ByteStream(next: { remaining.withLock { $0.isEmpty ? nil : $0.removeFirst() } }))
        let response = try await URLSessionTransport().stream(request)
        let answer = String(decoding: try await response.body.collect(upTo: 1000), as: UTF8.self)
        #expect(answer == "400000 - chunked")
        #expect(server.requests.first?.body == parts.reduce(Data(), +))
    }

    @Test func anUploadWhoseStreamFailsEndsWithTheStreamsError() async throws {
        struct Unreadable: Error {}
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("POST", "/upload") { _ in .text("got it") }
        var request = TransportRequest(method: .post, url: server.baseURL.appendingPathComponent("upload"))
        let sent = Locked(false)
        request.streamedBody = StreamedBody(
            length: nil,
            chunks: ByteStream(next: {
                guard
                    sent.withLock({ sent in
                        defer { sent = true }; return !sent
                    })
                else { throw Unreadable() }
                return Data("start".utf8)
            }))
        await #expect(throws: Unreadable.self) {
            _ = try await URLSessionTransport().stream(request).body.collect(upTo: 1000)
        }
    }
}
