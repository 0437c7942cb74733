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

    @Test func aReaderFarBehindEndsTheStreamInsteadOfGrowingMemory() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let limit = URLSessionTransport.streamBufferBytes
        let chunk = Data(repeating: 7, count: 64 << 10)
        let total = limit + (32 << 20)
        server.route("/big") { _ in
            .repeated(
                head: Data("HTTP/1.1 200 OK\r\nContent-Length: \(total)\r\n\r\n".utf8), chunk: chunk,
                count: total / chunk.count)
        }
        let response = try await URLSessionTransport().stream(get(server, "/big"))
        // Nobody reads. Once the buffer is full the client stops the transfer and closes the connection.
        #expect(await ReliabilityKit.poll { server.bytesSent > limit && server.openConnections == 0 })
        var received = 0
        let error = await #expect(throws: APIError.self) {
            for try await part in response.body { received += part.count }
        }
        guard case .responseTooLarge(let reported)? = error else {
            Issue.record("expected responseTooLarge, got \(String(describing: error))")
            return
        }
        #expect(reported == limit)
        // What was buffered arrived first, and no more than the buffer was held.
        #expect(received >= limit && received < total)
    }

    @Test func anUnreadStreamNeverStopsOtherRequestsOfTheProcess() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let feed = ChunkFeed()
        server.route("/endless") { _ in .streamed(next: feed.next) }
        server.route("/plain") { _ in .text("ok") }
        let streamed = try await URLSessionTransport().stream(get(server, "/endless"))
        // A streamed upload and an unread streamed response are in flight; a plain request on another transport of
        // the same process still completes (it hung when the stream waited inside URLSession's shared queue).
        feed.send(String(repeating: "x", count: 1 << 20))
        let upload = Task {
            var request = TransportRequest(method: .post, url: server.baseURL.appending(path: "plain"))
            request.streamedBody = StreamedBody(length: nil, chunks: ByteStream(Data(repeating: 1, count: 1 << 20)))
            return try await URLSessionTransport().stream(request).statusCode
        }
        let plain = try await URLSessionTransport().send(get(server, "/plain"))
        #expect(plain.statusCode == 200)
        #expect(try await upload.value == 200)
        _ = streamed
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

    /// The body is read once into a temporary file before the task starts; what keeps an upload's deadline moving
    /// while it is sent is URLSession reporting the bytes sent, which the transport passes to the body's observer.
    @Test func theBytesURLSessionSendsAreReportedToTheBodysObserver() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("POST", "/upload") { request in .text("\(request.body.count)") }
        let parts = (0..<20).map { Data(repeating: UInt8($0), count: 10_000) }
        let remaining = Locked(parts)
        let observed = Locked(0)
        var request = TransportRequest(method: .post, url: server.baseURL.appendingPathComponent("upload"))
        request.streamedBody = StreamedBody(
            length: nil, chunks: ByteStream(next: { remaining.withLock { $0.isEmpty ? nil : $0.removeFirst() } })
        ).observingSends { bytes in observed.withLock { $0 += bytes } }
        let response = try await URLSessionTransport().stream(request)
        #expect(String(decoding: try await response.body.collect(upTo: 100), as: UTF8.self) == "200000")
        // 200,000 bytes read into the file, then 200,000 reported sent.
        #expect(observed.withLock { $0 } == 400_000)
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
