import Foundation
import Testing

@testable import Courier

/// ``APIClient/stream(_:)`` and uploads: the same pipeline as `send`, coalescing and caching kept honest.
@Suite(.timeLimit(.minutes(1))) struct StreamingClientTests {
    private func client(
        _ transport: any HTTPTransport, base: URL = URL(string: "https://api.example.com")!,
        cache: ResponseCache? = nil,
        clock: TestClock = TestClock(), adapters: [any RequestAdapter] = []
    ) -> APIClient {
        APIClient(
            baseURL: base,
            configuration: .init(
                transport: transport, cache: cache, retryPolicy: RetryPolicy(jitter: .none), adapters: adapters,
                clock: clock))
    }

    @Test func aStreamedCallRunsAdaptersAndRetriesOnTheHead() async throws {
        let clock = TestClock()
        let transport = MockTransport { request, index in
            #expect(request.headers["X-Signed"] == "yes")
            return index == 0 ? .text(503) : .text(200, "body")
        }
        let signer = AnyRequestAdapter(variesOn: []) { request in request.headers["X-Signed"] = "yes" }
        let client = client(transport, clock: clock, adapters: [signer])
        let call = Task { try await client.stream(APIRequest<Data>.get("/s")) }
        // The retry's backoff, not an attempt's deadline timer (60 s), which sleeps on the same clock.
        await clock.waitForSleeper { $0 < .seconds(30) }
        clock.advance(by: .seconds(30))
        let response = try await call.value
        #expect(response.attempts == 2)
        #expect(try await response.body.collect(upTo: 100) == Data("body".utf8))
        #expect(transport.callCount == 2)
    }

    @Test func anUnacceptableStatusCarriesTheBody() async throws {
        let client = client(MockTransport { _, _ in .text(404, "missing") })
        let error = await #expect(throws: APIError.self) { try await client.stream(APIRequest<Data>.get("/s")) }
        #expect(error?.statusCode == 404)
        #expect(error?.response?.body == Data("missing".utf8))
    }

    @Test func identicalStreamsAreNotCoalesced() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let feed = ChunkFeed()
        server.route("/feed") { _ in .streamed(next: feed.next) }
        let client = client(URLSessionTransport(), base: server.baseURL)
        let callers = 5
        let heads = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<callers { group.addTask { try await client.stream(APIRequest<Data>.get("/feed")).statusCode } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(heads == Array(repeating: 200, count: callers))
        #expect(server.hits("/feed") == callers)
        #expect(client.metrics.joined == 0)
    }

    @Test func aStreamedResponseWithinTheEntryLimitIsStoredAndServedFromTheCache() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/small") { _ in .text("cached body", headers: [("Cache-Control", "max-age=600")]) }
        let client = client(URLSessionTransport(), base: server.baseURL, cache: ResponseCache(maxEntryBytes: 1024))
        let first = try await client.stream(APIRequest<Data>.get("/small"))
        #expect(try await first.body.collect(upTo: 1 << 20) == Data("cached body".utf8))
        let second = try await client.stream(APIRequest<Data>.get("/small"))
        #expect(second.source == .cache)
        #expect(try await second.body.collect(upTo: 1 << 20) == Data("cached body".utf8))
        #expect(server.hits("/small") == 1)
    }

    @Test func aStreamedRequestsDefaultFreshnessKeepsASilentResponse() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/silent") { _ in .text("no caching headers") }
        let client = client(URLSessionTransport(), base: server.baseURL, cache: ResponseCache())
        var request = APIRequest<Data>.get("/silent")
        request.defaultFreshness = .seconds(300)
        let first = try await client.stream(request)
        #expect(try await first.body.collect(upTo: 1 << 20) == Data("no caching headers".utf8))
        let second = try await client.stream(request)
        #expect(second.source == .cache)
        #expect(server.hits("/silent") == 1)
    }

    @Test func aStreamedResponseLargerThanTheEntryLimitPassesThroughAndIsNotStored() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let feed = ChunkFeed()
        for _ in 0..<4 { feed.send(Data(repeating: 1, count: 512)) }
        feed.finish()
        server.route("/large") { _ in .streamed(headers: [("Cache-Control", "max-age=600")], next: feed.next) }
        let cache = ResponseCache(maxEntryBytes: 1024)
        let client = client(URLSessionTransport(), base: server.baseURL, cache: cache)
        let first = try await client.stream(APIRequest<Data>.get("/large"))
        #expect(try await first.body.collect(upTo: 1 << 20).count == 2048)
        #expect(await cache.count == 0)
    }

    @Test func aOneShotUploadBodyIsNeverRetried() async throws {
        let clock = TestClock()
        let transport = MockTransport { _, index in index == 0 ? .text(503) : .text(200) }
        let client = client(transport, clock: clock)
        let body = StreamedBody(length: 4, chunks: ByteStream(Data("once".utf8)))
        let error = await #expect(throws: APIError.self) {
            try await client.upload(APIRequest<Void>.put("/u"), body: body).value
        }
        guard case .invalidRequest(.bodyNotReplayable)? = error else {
            Issue.record("expected bodyNotReplayable, got \(String(describing: error))")
            return
        }
        #expect(transport.callCount == 1)
    }

    @Test func aReplayableUploadBodyIsSentAgainWhole() async throws {
        let clock = TestClock()
        let transport = MockTransport { request, index in
            #expect(request.body == Data("again".utf8))
            return index == 0 ? .text(503) : .text(200)
        }
        let client = client(transport, clock: clock)
        let body = StreamedBody(length: 5) { ByteStream(Data("again".utf8)) }
        let upload = client.upload(APIRequest<Void>.put("/u"), body: body)
        // The retry's backoff, not the attempt's deadline timer (60 s), which sleeps on the same clock.
        await clock.waitForSleeper { $0 < .seconds(30) }
        clock.advance(by: .seconds(30))
        #expect(try await upload.value.attempts == 2)
        #expect(transport.callCount == 2)
    }
}
