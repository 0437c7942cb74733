import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct TestServerTests {
    private func makeSession(maxConnections: Int = 6) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpMaximumConnectionsPerHost = maxConnections
        configuration.timeoutIntervalForRequest = 300  // a backstop: under ThreadSanitizer 1,000 requests can take 30 s
        return URLSession(configuration: configuration)
    }

    private func get(
        _ session: URLSession, _ url: URL, method: String = "GET"
    ) async throws -> (Data, HTTPURLResponse) {
        var request = URLRequest(url: url)
        request.httpMethod = method
        let (data, response) = try await session.loadData(for: request)
        return (data, try #require(response as? HTTPURLResponse))
    }

    @Test func getJSONRouteReturnsBodyHeadersAndStatus() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("GET", "/items") { request in
            .json(#"{"q":"\#(request.query ?? "")"}"#, status: 201, headers: [("X-Trace", "abc")])
        }
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        let url = try #require(URL(string: "\(server.baseURL.absoluteString)/items?a=1&b=2"))
        let (data, response) = try await get(session, url)

        #expect(response.statusCode == 201)
        #expect(String(decoding: data, as: UTF8.self) == #"{"q":"a=1&b=2"}"#)
        #expect(response.value(forHTTPHeaderField: "Content-Type") == "application/json")
        #expect(response.value(forHTTPHeaderField: "X-Trace") == "abc")
        #expect(response.value(forHTTPHeaderField: "Content-Length") == "15")
        let received = try #require(server.requests.first)
        #expect(received.method == "GET")
        #expect(received.target == "/items?a=1&b=2")
        #expect(received.path == "/items")
        #expect(received.query == "a=1&b=2")
        #expect(received.header("host") == "127.0.0.1:\(server.port)")
        #expect(server.hits("/items") == 1)
    }

    @Test func unknownRouteAndWrongMethodReturn404() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("POST", "/only-post") { _ in .text("posted") }
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        let (data, response) = try await get(session, server.baseURL.appendingPathComponent("nowhere"))
        #expect(response.statusCode == 404)
        #expect(String(decoding: data, as: UTF8.self) == "no route")

        let (_, wrongMethod) = try await get(session, server.baseURL.appendingPathComponent("only-post"))
        #expect(wrongMethod.statusCode == 404)
        #expect(server.hits("/nowhere") == 1)
        #expect(server.hits("/only-post") == 1)
        #expect(server.totalHits == 2)
    }

    @Test func headGetsContentLengthButNoBody() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/doc") { _ in .text("twelve bytes") }
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        let (data, response) = try await get(session, server.baseURL.appendingPathComponent("doc"), method: "HEAD")
        #expect(response.statusCode == 200)
        #expect(data.isEmpty)
        #expect(response.value(forHTTPHeaderField: "Content-Length") == "12")
        // The connection stays usable after a HEAD and a 204.
        server.route("/empty") { _ in TestServer.Reply(status: 204) }
        let (empty, noContent) = try await get(session, server.baseURL.appendingPathComponent("empty"))
        #expect(noContent.statusCode == 204)
        #expect(empty.isEmpty)
        let (body, _) = try await get(session, server.baseURL.appendingPathComponent("doc"))
        #expect(String(decoding: body, as: UTF8.self) == "twelve bytes")
    }

    @Test(arguments: [50, 1_000])
    func concurrentRequestsAreCountedExactly(count: Int) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("GET", "/ping") { request in .text("pong \(request.query ?? "")") }
        let session = makeSession(maxConnections: 128)
        defer { session.invalidateAndCancel() }

        let bodies = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for index in 0..<count {
                let url = try #require(URL(string: "\(server.baseURL.absoluteString)/ping?\(index)"))
                group.addTask {
                    let (data, _) = try await session.loadData(from: url)
                    return (index, String(decoding: data, as: UTF8.self))
                }
            }
            return try await group.reduce(into: [Int: String]()) { $0[$1.0] = $1.1 }
        }

        #expect(bodies.count == count)
        #expect(bodies.allSatisfy { $0.value == "pong \($0.key)" })
        #expect(server.hits("/ping") == count)
        #expect(server.totalHits == count)
        #expect(Set(server.requests.compactMap(\.query)).count == count)
    }

    @Test func sequentialRequestsReuseOneConnection() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/n") { _ in .text("n") }
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        for _ in 0..<5 {
            let (data, _) = try await session.loadData(from: server.baseURL.appendingPathComponent("n"))
            #expect(data == Data("n".utf8))
        }
        #expect(server.hits("/n") == 5)
        #expect(server.acceptedConnections == 1)
    }

    @Test func postBodyArrivesIntact() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("POST", "/upload") { request in .text("\(request.body.count)") }
        let session = makeSession()
        defer { session.invalidateAndCancel() }
        let payload = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })

        var request = URLRequest(url: server.baseURL.appendingPathComponent("upload"))
        request.httpMethod = "POST"
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        let (data, response) = try await session.upload(for: request, from: payload)

        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: data, as: UTF8.self) == "200000")
        let received = try #require(server.requests.first)
        #expect(received.method == "POST")
        #expect(received.body == payload)
        #expect(received.header("CONTENT-TYPE") == "application/octet-stream")
    }

    @Test func chunkedRequestBodyIsDecoded() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("PUT", "/stream") { request in .text(String(decoding: request.body, as: UTF8.self)) }
        let session = makeSession()
        defer { session.invalidateAndCancel() }
        let text = String(repeating: "chunky-", count: 5_000)

        var request = URLRequest(url: server.baseURL.appendingPathComponent("stream"))
        request.httpMethod = "PUT"
        request.httpBodyStream = InputStream(data: Data(text.utf8))
        let (data, _) = try await session.loadData(for: request)

        #expect(String(decoding: data, as: UTF8.self) == text)
        let received = try #require(server.requests.first)
        #expect(received.header("Transfer-Encoding")?.lowercased() == "chunked")
        #expect(received.body == Data(text.utf8))
    }

    @Test func rawGarbageMakesURLSessionThrow() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/garbage") { _ in .raw(Data("NOT-HTTP garbage\r\n\r\n".utf8)) }
        server.route("/hangup") { _ in .close }
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        await #expect(throws: (any Error).self) {
            _ = try await session.loadData(from: server.baseURL.appendingPathComponent("garbage"))
        }
        await #expect(throws: (any Error).self) {
            _ = try await session.loadData(from: server.baseURL.appendingPathComponent("hangup"))
        }
        #expect(server.hits("/garbage") >= 1)
        #expect(server.hits("/hangup") >= 1)
    }

    @Test(.timeLimit(.minutes(1))) func stalledRequestEndsOnCancellationAndShutdownIsPrompt() async throws {
        let server = try TestServer()
        server.route("/stall") { _ in .stall }
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        let url = server.baseURL.appendingPathComponent("stall")
        // "Prompt" is bounded by the test's time limit, never by a wall-clock assertion.
        let client = Task { try await session.loadData(from: url) }
        await server.waitForHits("/stall", count: 1)
        client.cancel()
        let result = await client.result
        #expect(throws: (any Error).self) { try result.get() }
        #expect(server.hits("/stall") == 1)

        // The connection's thread notices the client went away, without a shutdown.
        for _ in 0..<500 where server.openConnections > 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(server.openConnections == 0)

        // A second stall that only ends because of shutdown.
        let second = Task { try await session.loadData(from: url) }
        await server.waitForHits("/stall", count: 2)
        server.shutdown()
        #expect(server.openConnections == 0)
        await #expect(throws: (any Error).self) { try await second.value }
    }

    @Test func waitForHitsResumesWhenRequestArrivesBeforeHandlerFinishes() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let release = Locked(false)
        server.route("/slow") { _ in
            for _ in 0..<1_000 where !release.withLock({ $0 }) {
                try? await Task.sleep(for: .milliseconds(5))
            }
            return .text("done")
        }
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        await server.waitForHits("/slow", count: 0)  // Already satisfied: returns at once.
        let url = server.baseURL.appendingPathComponent("slow")
        let client = Task { try await session.loadData(from: url) }
        await server.waitForHits("/slow", count: 1)
        #expect(server.hits("/slow") == 1)
        #expect(server.hits("/other") == 0)
        release.withLock { $0 = true }
        let (data, _) = try await client.value
        #expect(String(decoding: data, as: UTF8.self) == "done")

        // A cancelled wait returns instead of hanging.
        let waiter = Task { await server.waitForHits("/never", count: 1) }
        waiter.cancel()
        await waiter.value
        #expect(server.hits("/never") == 0)
    }

    @Test func shutdownRefusesNewConnections() async throws {
        let server = try TestServer()
        server.route("/x") { _ in .text("x") }
        let session = makeSession()
        defer { session.invalidateAndCancel() }
        let url = server.baseURL.appendingPathComponent("x")

        _ = try await session.loadData(from: url)
        server.shutdown()
        server.shutdown()
        await #expect(throws: (any Error).self) { _ = try await session.loadData(from: url) }
        #expect(server.totalHits == 1)
    }

    @Test func droppingTheLastReferenceStopsTheServer() async throws {
        var server: TestServer? = try TestServer()
        let url = try #require(server?.baseURL.appendingPathComponent("gone"))
        let session = makeSession()
        defer { session.invalidateAndCancel() }

        let (_, response) = try await session.loadData(from: url)
        #expect((response as? HTTPURLResponse)?.statusCode == 404)
        server = nil
        await #expect(throws: (any Error).self) { _ = try await session.loadData(from: url) }
    }
}

extension URLSession {
    /// `data(for:)` without Foundation's own async version, which can deadlock on Linux when a task is cancelled
    /// while its response arrives (its cancellation handler waits on the session's queue; see
    /// `URLSessionTransport.load`): a task group's cancellation under ThreadSanitizer made that happen here. The
    /// handler here only flags the task and cancels it from another queue, as the transport does.
    func loadData(for request: URLRequest) async throws -> (Data, URLResponse) {
        let pending = Locked<(task: URLSessionDataTask?, isCancelled: Bool)>((nil, false))
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                let isCancelled = pending.withLock { pending in
                    pending.task = task
                    return pending.isCancelled
                }
                if isCancelled { task.cancel() } else { task.resume() }
            }
        } onCancel: {
            let task = pending.withLock { pending in
                pending.isCancelled = true
                return pending.task
            }
            if let task { DispatchQueue.global().async { task.cancel() } }
        }
    }

    /// `data(from:)`, as ``loadData(for:)``.
    func loadData(from url: URL) async throws -> (Data, URLResponse) {
        try await loadData(for: URLRequest(url: url))
    }
}
