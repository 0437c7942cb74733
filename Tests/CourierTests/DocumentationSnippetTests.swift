// The examples of the DocC articles in Sources/Courier/Courier.docc, run against a stub transport through the
// public API only (no @testable), to check what the articles say they do: who joined, where an answer came from,
// how many attempts a call took. Scripts/snippets.sh compiles each article's code blocks exactly as written; these
// tests run the same calls with a server that answers, which the articles' own programs do not have.
import Courier
import CourierTesting
import Foundation
import Testing

// MARK: - Types the articles use

private struct User: Codable, Sendable, Equatable {
    let id: Int
    let name: String
}

private struct Feed: Decodable, Sendable {
    let items: [String]
}

private let baseURL = URL(string: "https://api.example.com/v1")!
private let ada = Data(#"{"id": 42, "name": "Ada"}"#.utf8)

// MARK: - The articles

@Suite struct DocumentationSnippetTests {
    /// Compiled, never run: it would use the network.
    static func overview() async throws {
        let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!)
        let user = try await client.send(APIRequest<User>.get("/users/42")).value
        print(user)
    }

    /// Compiled, never run: it would use the network.
    static func firstRequest() async throws {
        struct User: Decodable { let id: Int; let name: String }

        let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!)
        let user = try await client.send(APIRequest<User>.get("/users/42")).value
        print("Hello, \(user.name)")
    }

    @Test func gettingStarted() async throws {
        let transport = StubTransport { request in
            TransportResponse(statusCode: 200, body: Data(#"{"id": 42, "name": "Ada"}"#.utf8))
        }
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com/v1")!, configuration: .init(transport: transport))
        #expect(try await client.send(APIRequest<User>.get("/users/42")).value == User(id: 42, name: "Ada"))

        struct NewUser: Encodable, Sendable { let name: String }

        let created = try await client.send(APIRequest<User>.post("/users", body: NewUser(name: "Ada")))
        print(created.statusCode, created.value.name)
        try await client.send(APIRequest<Void>.delete("/users/42"))
        let avatar: Data = try await client.send(APIRequest<Data>.get("/users/42/avatar")).value

        var search = APIRequest<User>.get("/users/search", query: [URLQueryItem(name: "name", value: "Ada")])
        search.headers["Accept-Language"] = "en"
        search.timeout = .seconds(5)
        let response = try await client.send(search)
        print(response.value, response.source, response.joined, response.attempts)
        #expect(!avatar.isEmpty && response.attempts == 1)
    }

    @Test func gettingStartedConfigurationAndErrors() async throws {
        var configuration = APIClient.Configuration()
        configuration.headers["User-Agent"] = "my-service/1.0"
        configuration.timeout = .seconds(10)
        configuration.decoder.keyDecodingStrategy = .convertFromSnakeCase
        configuration.transport = StubTransport { _ in
            TransportResponse(statusCode: 404, body: Data("no such user".utf8))
        }
        let client = APIClient(baseURL: baseURL, configuration: configuration)

        do {
            let user = try await client.send(APIRequest<User>.get("/users/0")).value
            print(user)
        } catch let error as APIError {
            switch error {
            case .unacceptableStatus(let response) where response.statusCode == 404:
                print("no such user")
            case .transport, .timedOut:
                print("the network failed, and retries did not help: \(error)")
            default:
                print(error)  // every case reads as a sentence, and never prints a credential
            }
        }
        await #expect(throws: APIError.self) { try await client.send(APIRequest<User>.get("/users/0")) }
    }

    @Test func requestCoalescing() async throws {
        let transport = StubTransport { request in
            return TransportResponse(statusCode: 200, body: ada)
        }
        var configuration = APIClient.Configuration(transport: transport)
        configuration.coalescingIgnoredHeaders.insert("X-Client-Version")  // a header the answer never depends on
        let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, configuration: configuration)

        async let first = client.send(APIRequest<User>.get("/users/42"))
        async let second = client.send(APIRequest<User>.get("/users/42"))
        let (a, b) = try await (first, second)
        print(a.joined, b.joined)  // false, true: the second call found the first in flight

        var nextTicket = APIRequest<Data>.post("/tickets/next")
        nextTicket.coalescing = .never  // every call must reach the server
        var search = APIRequest<[User]>.post("/users/search", body: ["name": "Ada"])
        search.coalescing = .always  // a POST that only reads: share it like a GET

        let sent = transport.callCount
        #expect(a.value == b.value)
        #expect(sent == ((a.joined || b.joined) ? 1 : 2))
        #expect(nextTicket.coalescing == .never && search.coalescing == .always)
    }

    @Test func standaloneCoalescer() async throws {
        let (gate, open) = AsyncStream<Void>.makeStream()
        @Sendable func fetchProfileName(_ id: Int) async -> String {
            for await _ in gate {}  // a slow fetch, until the test opens the gate
            return "user \(id)"
        }
        let profiles = RequestCoalescer<Int, String>()

        @Sendable func profileName(for id: Int) async throws -> String {
            let result = try await profiles.run(id) {
                await fetchProfileName(id)  // runs once, however many callers ask for `id` meanwhile
            }
            return result.value
        }

        async let first = profileName(for: 7)
        async let second = profileName(for: 7)
        while await profiles.waiterCount < 2 { await Task.yield() }
        open.finish()
        #expect(try await [first, second] == ["user 7", "user 7"])
        #expect(await profiles.flightCount == 0)
    }

    @Test func authentication() async throws {
        let transport = StubTransport { request in
            if request.url.path.hasSuffix("/oauth/token") {
                return TransportResponse(statusCode: 200, body: Data(#"{"access": "fresh", "refresh": "r2"}"#.utf8))
            }
            let isFresh = request.headers["Authorization"] == "Bearer fresh"
            return isFresh ? TransportResponse(statusCode: 200, body: ada) : TransportResponse(statusCode: 401)
        }
        let saved = Credential(accessToken: "expired", refreshToken: "r1", identity: "user-42")

        struct Tokens: Decodable { let access: String; let refresh: String }
        struct RefreshGrant: Encodable, Sendable { let refreshToken: String }
        struct SignInRequired: Error {}

        let baseURL = URL(string: "https://api.example.com/v1")!
        let authServer = APIClient(baseURL: baseURL, configuration: .init(transport: transport))
        let refresher = TokenRefresher(credential: saved) { expired in
            // Called one at a time, however many requests were rejected together.
            guard let refreshToken = expired?.refreshToken else { throw SignInRequired() }
            let grant = RefreshGrant(refreshToken: refreshToken)
            let tokens = try await authServer.send(APIRequest<Tokens>.post("/oauth/token", body: grant)).value
            return Credential(
                accessToken: tokens.access, refreshToken: tokens.refresh,
                expiresAt: Date().addingTimeInterval(3600), identity: "user-42")
        }

        var configuration = APIClient.Configuration(transport: transport)
        configuration.authenticator = refresher
        let client = APIClient(baseURL: baseURL, configuration: configuration)

        // Twenty different requests, all rejected with the expired token: one refresh, twenty resends.
        let users = try await withThrowingTaskGroup(of: User.self) { group in
            for id in 1...20 {
                group.addTask { try await client.send(APIRequest<User>.get("/users/\(id)")).value }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(users.count == 20)
        #expect(await refresher.refreshCount == 1)
        #expect(await refresher.credential?.accessToken == "fresh")

        var status = APIRequest<Data>.get("/status")
        status.requiresAuthentication = false  // sent without a credential; never waits for a refresh

        let afterLogin = Credential(accessToken: "a7", refreshToken: "r7", identity: "user-7")
        await refresher.setCredential(afterLogin)  // sign-in: a new identity, a new partition
        await refresher.clear()  // sign-out: callers waiting for a refresh fail with .signedOut

        _ = try? await client.send(status)
        #expect(transport.requests.last?.headers["Authorization"] == nil)
    }

    @Test func responseCaching() async throws {
        let transport = StubTransport { request in
            if request.headers["If-None-Match"] == #""v1""# { return TransportResponse(statusCode: 304) }
            return TransportResponse(
                statusCode: 200, headers: ["Cache-Control": "max-age=60", "ETag": #""v1""#],
                body: Data(#"{"items": ["a", "b"]}"#.utf8))
        }
        // A fixed date: freshness is computed from it, so a slow run can never see the copy go stale.
        let now = Date(timeIntervalSince1970: 1_704_067_200)
        let cache = ResponseCache(maxEntries: 500, maxBytes: 8 << 20)
        let configuration = APIClient.Configuration(transport: transport, cache: cache, currentDate: { now })
        let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, configuration: configuration)

        let first = try await client.send(APIRequest<Feed>.get("/feed"))  // .network: stored, fresh for 60 s
        let second = try await client.send(APIRequest<Feed>.get("/feed"))  // .cache: nothing was sent

        var check = APIRequest<Feed>.get("/feed")
        check.cachePolicy = .reloadRevalidatingCache  // ask the server, even though the copy is fresh
        let third = try await client.send(check)  // .revalidated: a 304, and the stored body
        print(first.source, second.source, third.source, await cache.statistics)

        #expect([first.source, second.source, third.source] == [.network, .cache, .revalidated])
        #expect(second.attempts == 0 && third.value.items == ["a", "b"])

        var offline = APIRequest<Feed>.get("/feed")
        offline.cachePolicy = .onlyIfCached  // never the network; APIError.notCached when nothing is stored

        var uncached = APIClient.Configuration(transport: transport)
        uncached.cache = nil  // no cache at all for clients made from this configuration

        #expect(try await client.send(offline).source == .cache)
        let withoutCache = APIClient(baseURL: baseURL, configuration: uncached)
        await #expect(throws: APIError.self) { try await withoutCache.send(offline) }

        // Snippet: ResponseCaching.md, "Choose a lifetime when the server names none"
        var fiveMinutes = APIClient.Configuration(transport: transport)
        fiveMinutes.defaultFreshness = .seconds(300)  // for answers without max-age or Expires

        var prices = APIRequest<Feed>.get("/prices")
        prices.defaultFreshness = .seconds(10)  // this one goes stale sooner
        // End snippet

        #expect(fiveMinutes.defaultFreshness == .seconds(300) && prices.defaultFreshness == .seconds(10))

        // Snippet: ResponseCaching.md, "Size, sharing and inspection"
        await cache.remove(url: URL(string: "https://api.example.com/v1/feed")!)
        await cache.remove(urlsWithPrefix: URL(string: "https://api.example.com/v1/users/42/")!)
        await cache.removeAll { url, entry in entry.response.statusCode >= 400 }
        // End snippet

        #expect(await cache.count == 0)
    }

    @Test func responseCachingOnDisk() async throws {
        let transport = StubTransport { _ in
            TransportResponse(
                statusCode: 200, headers: ["Cache-Control": "max-age=60"], body: Data(#"{"items": ["a"]}"#.utf8))
        }
        // Snippet: ResponseCaching.md, "Keep the cache on disk"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("api-cache-\(UUID())")
        let cache = try ResponseCache(directory: directory, maxDiskBytes: 64 << 20)
        let configuration = APIClient.Configuration(transport: transport, cache: cache)

        var feed = APIRequest<Feed>.get("/feed")
        feed.cachePolicy = .returnCacheWhenOffline  // the last answer when the server cannot be reached
        // End snippet

        defer { try? FileManager.default.removeItem(at: directory) }
        let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, configuration: configuration)
        _ = try await client.send(feed)
        #expect(cache.diskCount == 1)
        // One cache per directory at a time (a restart is CacheDiskTierTests').
        #expect(throws: ResponseCache.StorageError.self) { try ResponseCache(directory: directory) }
        #expect(try await client.send(feed).source == .cache)
    }

    @Test func retries() async throws {
        let transport = StubTransport { _, index in
            index < 2
                ? TransportResponse(statusCode: 503) : TransportResponse(statusCode: 201, body: Data("{}".utf8))
        }
        struct Order: Encodable, Sendable { let sku: String }

        var configuration = APIClient.Configuration(transport: transport)
        configuration.retryPolicy = RetryPolicy(
            maxAttempts: 5, baseDelay: .milliseconds(1), maximumDelay: .milliseconds(20))
        let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, configuration: configuration)

        var charge = APIRequest<Data>.post("/charges", body: Order(sku: "book-1"))
        charge.headers["Idempotency-Key"] = UUID().uuidString  // a POST is retried only with one
        let receipt = try await client.send(charge)
        print(receipt.attempts)  // 3 when the server answered 503, 503, then 201
        #expect(receipt.attempts == 3 && receipt.statusCode == 201)

        let conflicts = RetryPolicy.custom(maxAttempts: 4) { context in
            switch context.outcome {
            case .response(let response) where response.statusCode == 409:
                .retry(after: .milliseconds(100 * context.attempt))
            case .failure(.transport(.connectionLost, _)):
                .retry(after: .zero)
            default:
                .doNotRetry
            }
        }
        let context = RetryContext(
            request: TransportRequest(url: baseURL), attempt: 1, outcome: .response(TransportResponse(statusCode: 409)),
            now: Date())
        #expect(conflicts.decision(for: context) == .retry(after: .milliseconds(100)))
        #expect(RetryPolicy.never.maxAttempts == 1)
    }

    @Test func eventsAndMetrics() async throws {
        let transport = StubTransport { _ in TransportResponse(statusCode: 200, body: Data("{}".utf8)) }
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com")!, configuration: .init(transport: transport))
        let events = client.events
        let response = try await client.send(APIRequest<Data>.get("/users/42"))

        var steps: [String] = []
        for await event in events {
            steps.append("\(event.kind)")
            if case .requestFinished = event.kind { break }
        }
        print(steps.joined(separator: "\n"))  // started …, cache miss, attempt 1 sent, ← 200 …, stored …, finished …
        print(response.source)  // network
        #expect(steps.first?.hasPrefix("started GET") == true)
        #expect(steps.contains("cache miss"))
        #expect(response.source == .network)

        let metrics = client.metrics
        print("\(metrics.requests) requests, \(metrics.upstreamCalls) sent, \(metrics.cacheHits) from the cache")
        #expect(metrics.requests == 1 && metrics.upstreamCalls == 1)

        let printer = client.printEvents()
        try await client.send(APIRequest<Data>.get("/users/42"))  // printed, one line per step
        printer.cancel()
    }
}

// MARK: - StreamingAndFiles.md, run against a TestServer on loopback

extension DocumentationSnippetTests {
    private struct Completion: Encodable, Sendable {
        let model: String
        let prompt: String
        let stream: Bool
    }

    /// Serves what the streaming article's snippets ask for.
    private static func streamingServer() throws -> TestServer {
        let server = try TestServer()
        server.route("/exports/today.csv") { _ in .text("a,b\n1,2\n3,4\n", headers: [("Content-Type", "text/csv")]) }
        server.route("PUT", "/backups/today") { request in .text("stored \(request.body.count) bytes") }
        server.route("POST", "/photos") { request in .json(#"{"received":\#(request.body.count)}"#) }
        server.route("/notifications") { _ in
            .text("event: ping\ndata: {\"n\": 1}\nid: 1\n\n", headers: [("Content-Type", "text/event-stream")])
        }
        server.route("POST", "/v1/completions") { _ in
            .text(
                "data: {\"token\": \"Hel\"}\n\ndata: {\"token\": \"lo\"}\n\ndata: [DONE]\n\n",
                headers: [("Content-Type", "text/event-stream")])
        }
        return server
    }

    @Test func streamingAndFiles() async throws {
        let server = try Self.streamingServer()
        defer { server.shutdown() }
        let client = APIClient(baseURL: server.baseURL)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        // Snippet: StreamingAndFiles.md, "Stream a response"
        let response = try await client.stream(APIRequest<Data>.get("/exports/today.csv"))
        print(response.statusCode, response.headers["Content-Type"] ?? "")
        var lines = 0
        for try await chunk in response.body {
            lines += chunk.filter { $0 == UInt8(ascii: "\n") }.count
        }
        // End snippet
        #expect(lines == 3)

        // Snippet: StreamingAndFiles.md, "Download to a file"
        let destination = directory.appendingPathComponent("today.csv")
        let download = client.download(APIRequest<Void>.get("/exports/today.csv"), to: destination)
        let watcher = Task {
            for await progress in download.progress {
                print("\(progress.completedBytes) of \(progress.totalBytes ?? -1) bytes")
            }
        }
        let saved = try await download.value  // saved.value == destination, complete
        await watcher.value
        // End snippet
        #expect(try Data(contentsOf: saved.value) == Data("a,b\n1,2\n3,4\n".utf8))

        let archive = destination
        // Snippet: StreamingAndFiles.md, "Upload a file or a stream"
        let receipt = try await client.upload(APIRequest<Data>.put("/backups/today"), fromFile: archive).value

        let generated = StreamedBody(length: nil) {
            // Called once per attempt, so a retry sends the body again from its start.
            ByteStream(Data("line 1\nline 2\n".utf8))
        }
        let streamed = client.upload(APIRequest<Data>.put("/backups/today"), body: generated, contentType: "text/plain")
        print(String(decoding: try await streamed.value.value, as: UTF8.self))
        // End snippet
        #expect(String(decoding: receipt.value, as: UTF8.self) == "stored 12 bytes")

        // Snippet: StreamingAndFiles.md, "Send a multipart form"
        struct PhotoReceipt: Decodable, Sendable { let received: Int }

        var form = MultipartForm()
        form.addField("title", value: "Übersicht")
        form.addFile("photo", at: archive, filename: "Käse.csv", contentType: "text/csv")
        let photo = try await client.upload(APIRequest<PhotoReceipt>.post("/photos"), form: form).value
        // End snippet
        #expect(photo.value.received > 0)

        // Snippet: StreamingAndFiles.md, "Receive server-sent events"
        for try await event in client.serverSentEvents(APIRequest<Data>.get("/notifications")) {
            print(event.type, event.data, event.lastEventID ?? "")
            break  // a real consumer reads until it is cancelled; the stream reconnects by itself
        }
        // End snippet

        // Snippet: StreamingAndFiles.md, "Stream tokens from a language model"
        struct Delta: Decodable { let token: String }

        let prompt = APIRequest<Data>.post(
            "/v1/completions", body: Completion(model: "small", prompt: "Say hello", stream: true))
        var text = ""
        // No reconnection: sending the prompt again would start a new answer, not resume this one.
        for try await event in client.serverSentEvents(prompt, maxReconnects: 0) {
            if event.data == "[DONE]" { break }
            text += try event.decode(Delta.self).token
            print(text)  // show the answer as it grows
        }
        // End snippet
        #expect(text == "Hello")
    }
}
