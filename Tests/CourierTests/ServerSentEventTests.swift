import Foundation
import Testing

@testable import Courier

/// The WHATWG `text/event-stream` parser, and ``APIClient/serverSentEvents(_:lastEventID:reconnectionDelay:maxReconnects:)``
/// over real sockets: reconnection with `Last-Event-ID` after the server's `retry:`, on the client's clock.
@Suite(.timeLimit(.minutes(1))) struct ServerSentEventTests {
    private func parse(_ chunks: [String]) throws -> [ServerSentEvent] {
        var parser = ServerSentEventParser()
        return try chunks.flatMap { try parser.feed(Data($0.utf8)) }
    }

    @Test func fieldsMultiLineDataAndCommentsFollowTheStandard() throws {
        let events = try parse([
            ": a comment\n", "event: token\ndata: first\ndata:  second\nid: 7\nretry: 2500\n\n",
            "data: plain\n\n",
        ])
        #expect(
            events == [
                ServerSentEvent(type: "token", data: "first\n second", lastEventID: "7", retry: .milliseconds(2500)),
                ServerSentEvent(data: "plain", lastEventID: "7"),
            ])
    }

    @Test func lineEndingsSplitAcrossChunksAreOneLineEnd() throws {
        #expect(try parse(["data: a\r", "\ndata: b\r\r", "data: c\n", "\n"]).map(\.data) == ["a\nb", "c"])
    }

    @Test func malformedLinesAreIgnoredNeverFatal() throws {
        let events = try parse([
            "\u{FEFF}data: after bom\n\n", "retry: soon\nid: bad\u{0}id\nunknown: x\ndata\n\n", "nocolon\n\n",
            "data: \u{FF}\n\n", "data: dropped at the end without a blank line",
        ])
        #expect(events.map(\.data) == ["after bom", "", "\u{FF}"])
        #expect(events.allSatisfy { $0.retry == nil && $0.lastEventID == nil })
        // Invalid UTF-8 bytes are replaced, not fatal.
        var parser = ServerSentEventParser()
        #expect(try parser.feed(Data([0x64, 0x61, 0x74, 0x61, 0x3A, 0xC3, 0x0A, 0x0A])).first?.data == "\u{FFFD}")
    }

    @Test func anEndlessLineFailsWithResponseTooLarge() throws {
        var parser = ServerSentEventParser()
        let chunk = Data(repeating: 0x61, count: 1 << 20)
        #expect(throws: APIError.self) {
            for _ in 0...8 { _ = try parser.feed(chunk) }
        }
    }

    @Test func aDroppedStreamReconnectsWithLastEventIDAfterTheServersRetry() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let first = ChunkFeed()
        first.send("retry: 5000\nid: 41\ndata: one\n\n")
        first.finish()
        let second = ChunkFeed()
        second.send("id: 42\ndata: two\n\n")
        server.routeEventStream("/events", first: first, then: second)
        let clock = TestClock()
        let client = APIClient(
            baseURL: server.baseURL, configuration: .init(transport: URLSessionTransport(), clock: clock))
        var events = client.serverSentEvents(APIRequest<Data>.get("/events")).makeAsyncIterator()
        #expect(try await events.next()?.data == "one")
        let reconnected = Task {
            await clock.waitForSleeper(of: .seconds(5))
            clock.advance(by: .seconds(5))
        }
        #expect(try await events.next() == ServerSentEvent(data: "two", lastEventID: "42"))
        await reconnected.value
        #expect(server.requests.map { $0.header("Last-Event-ID") } == [nil, "41"])
        #expect(server.requests.allSatisfy { $0.header("Accept") == "text/event-stream" })
    }

    @Test func aStreamWhoseConsumerStopsIsClosed() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let feed = ChunkFeed()
        feed.send("data: hello\n\n")
        server.route("/events") { _ in .streamed(headers: [("Content-Type", "text/event-stream")], next: feed.next) }
        let client = APIClient(baseURL: server.baseURL, configuration: .init(transport: URLSessionTransport()))
        let consumer = Task {
            for try await event in client.serverSentEvents(APIRequest<Data>.get("/events")) where event.data == "hello"
            {
                return true
            }
            return false
        }
        #expect(try await consumer.value)
        await feed.abandoned()
        #expect(server.hits("/events") == 1)
    }

    @Test func aResponseThatIsNotAnEventStreamEndsTheSequenceWithAnError() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/events") { _ in .json("{}") }
        let client = APIClient(baseURL: server.baseURL, configuration: .init(transport: URLSessionTransport()))
        let error = await #expect(throws: APIError.self) {
            for try await _ in client.serverSentEvents(APIRequest<Data>.get("/events")) {}
        }
        guard case .invalidResponse(let reason, _)? = error else {
            Issue.record("expected invalidResponse, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("application/json"))
        #expect(server.hits("/events") == 1)
    }
}
