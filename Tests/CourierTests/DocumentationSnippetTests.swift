// The code of the DocC articles in Sources/Courier/Courier.docc, compiled and run against the public API only
// (no @testable), so that renaming an API breaks this build rather than the reader.
//
// Each block between `// Snippet: <Article>.md, "<section>"` and `// End snippet` appears verbatim (dedented, without
// its `import` lines) as a code block of that article, and every Swift code block of an article is one of these
// snippets: Scripts/docs.sh checks both directions, so edit the two together.
import Courier
import Foundation
import Testing

// MARK: - Test doubles, as TestingYourCode.md shows them

// Snippet: TestingYourCode.md, "Write a transport from a closure"
struct StubTransport: HTTPTransport {
    let respond: @Sendable (TransportRequest) async throws -> TransportResponse

    init(_ respond: @escaping @Sendable (TransportRequest) async throws -> TransportResponse) {
        self.respond = respond
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        try await respond(request)
    }
}

/// Remembers every request a test's transport was sent.
actor RequestLog {
    private(set) var requests: [TransportRequest] = []

    func record(_ request: TransportRequest) { requests.append(request) }
}
// End snippet

// Snippet: TestingYourCode.md, "Control time with your own clock"
/// A clock whose time moves only when a test calls `advance(by:)`.
final class ManualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [UUID: (deadline: Instant, continuation: CheckedContinuation<Void, any Error>)] = [:]
    }

    private let state = LockedValue(State())

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }

    /// How long each sleeping task still has to wait.
    var pendingSleeps: [Duration] { state.withLock { s in s.sleepers.values.map { s.now.duration(to: $0.deadline) } } }

    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[id] = (deadline, continuation)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every task whose deadline has come.
    func advance(by duration: Duration) {
        let due = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.map(\.continuation)
        }
        for continuation in due { continuation.resume() }
    }
}

/// A value behind a lock: the one small `@unchecked Sendable` box a test double needs.
final class LockedValue<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
// End snippet

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
        // Snippet: Courier.md, "Overview"
        let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!)
        let user = try await client.send(APIRequest<User>.get("/users/42")).value
        // End snippet
        print(user)
    }

    /// Compiled, never run: it would use the network.
    static func firstRequest() async throws {
        // Snippet: GettingStarted.md, "Make your first request"
        struct User: Decodable { let id: Int; let name: String }

        let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!)
        let user = try await client.send(APIRequest<User>.get("/users/42")).value
        print("Hello, \(user.name)")
        // End snippet
    }

    @Test func gettingStarted() async throws {
        // Snippet: GettingStarted.md, "Try it without a server"
        let transport = StubTransport { request in
            TransportResponse(statusCode: 200, body: Data(#"{"id": 42, "name": "Ada"}"#.utf8))
        }
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com/v1")!, configuration: .init(transport: transport))
        // End snippet
        #expect(try await client.send(APIRequest<User>.get("/users/42")).value == User(id: 42, name: "Ada"))

        // Snippet: GettingStarted.md, "Send, read and write"
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
        // End snippet
        #expect(!avatar.isEmpty && response.attempts == 1)
    }

    @Test func gettingStartedConfigurationAndErrors() async throws {
        // Snippet: GettingStarted.md, "Configure the client"
        var configuration = APIClient.Configuration()
        configuration.headers["User-Agent"] = "my-service/1.0"
        configuration.timeout = .seconds(10)
        configuration.decoder.keyDecodingStrategy = .convertFromSnakeCase
        // End snippet
        configuration.transport = StubTransport { _ in
            TransportResponse(statusCode: 404, body: Data("no such user".utf8))
        }
        let client = APIClient(baseURL: baseURL, configuration: configuration)

        // Snippet: GettingStarted.md, "Handle errors"
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
        // End snippet
        await #expect(throws: APIError.self) { try await client.send(APIRequest<User>.get("/users/0")) }
    }

    @Test func requestCoalescing() async throws {
        let log = RequestLog()
        let transport = StubTransport { request in
            await log.record(request)
            return TransportResponse(statusCode: 200, body: ada)
        }
        // Snippet: RequestCoalescing.md, "Share one call"
        var configuration = APIClient.Configuration(transport: transport)
        configuration.coalescingHeaders = ["X-Tenant"]  // requests for different tenants never share
        let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, configuration: configuration)

        async let first = client.send(APIRequest<User>.get("/users/42"))
        async let second = client.send(APIRequest<User>.get("/users/42"))
        let (a, b) = try await (first, second)
        print(a.joined, b.joined)  // false, true: the second call found the first in flight
        // End snippet

        // Snippet: RequestCoalescing.md, "Opt out, or in"
        var nextTicket = APIRequest<Data>.post("/tickets/next")
        nextTicket.coalescing = .never  // every call must reach the server
        var search = APIRequest<[User]>.post("/users/search", body: ["name": "Ada"])
        search.coalescing = .always  // a POST that only reads: share it like a GET
        // End snippet

        let sent = await log.requests.count
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
        // Snippet: RequestCoalescing.md, "Coalesce any async work"
        let profiles = RequestCoalescer<Int, String>()

        @Sendable func profileName(for id: Int) async throws -> String {
            let result = try await profiles.run(id) {
                await fetchProfileName(id)  // runs once, however many callers ask for `id` meanwhile
            }
            return result.value
        }
        // End snippet

        async let first = profileName(for: 7)
        async let second = profileName(for: 7)
        while await profiles.waiterCount < 2 { await Task.yield() }
        open.finish()
        #expect(try await [first, second] == ["user 7", "user 7"])
        #expect(await profiles.flightCount == 0)
    }

    @Test func authentication() async throws {
        let log = RequestLog()
        let transport = StubTransport { request in
            await log.record(request)
            if request.url.path.hasSuffix("/oauth/token") {
                return TransportResponse(statusCode: 200, body: Data(#"{"access": "fresh", "refresh": "r2"}"#.utf8))
            }
            let isFresh = request.headers["Authorization"] == "Bearer fresh"
            return isFresh ? TransportResponse(statusCode: 200, body: ada) : TransportResponse(statusCode: 401)
        }
        let saved = Credential(accessToken: "expired", refreshToken: "r1", identity: "user-42")

        // Snippet: AuthenticationAndTokenRefresh.md, "Plug in a refresher"
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
        // End snippet

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

        // Snippet: AuthenticationAndTokenRefresh.md, "Public endpoints, sign-in and sign-out"
        var status = APIRequest<Data>.get("/status")
        status.requiresAuthentication = false  // sent without a credential; never waits for a refresh

        let afterLogin = Credential(accessToken: "a7", refreshToken: "r7", identity: "user-7")
        await refresher.setCredential(afterLogin)  // sign-in: a new identity, a new partition
        await refresher.clear()  // sign-out: callers waiting for a refresh fail with .signedOut
        // End snippet

        _ = try? await client.send(status)
        #expect(await log.requests.last?.headers["Authorization"] == nil)
    }

    @Test func responseCaching() async throws {
        let transport = StubTransport { request in
            if request.headers["If-None-Match"] == #""v1""# { return TransportResponse(statusCode: 304) }
            return TransportResponse(
                statusCode: 200, headers: ["Cache-Control": "max-age=60", "ETag": #""v1""#],
                body: Data(#"{"items": ["a", "b"]}"#.utf8))
        }
        // Snippet: ResponseCaching.md, "See where an answer came from"
        let cache = ResponseCache(maxEntries: 500, maxBytes: 8 << 20)
        let configuration = APIClient.Configuration(transport: transport, cache: cache)
        let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, configuration: configuration)

        let first = try await client.send(APIRequest<Feed>.get("/feed"))  // .network: stored, fresh for 60 s
        let second = try await client.send(APIRequest<Feed>.get("/feed"))  // .cache: nothing was sent

        var check = APIRequest<Feed>.get("/feed")
        check.cachePolicy = .reloadRevalidatingCache  // ask the server, even though the copy is fresh
        let third = try await client.send(check)  // .revalidated: a 304, and the stored body
        print(first.source, second.source, third.source, await cache.statistics)
        // End snippet

        #expect([first.source, second.source, third.source] == [.network, .cache, .revalidated])
        #expect(second.attempts == 0 && third.value.items == ["a", "b"])

        // Snippet: ResponseCaching.md, "Choose per request"
        var offline = APIRequest<Feed>.get("/feed")
        offline.cachePolicy = .onlyIfCached  // never the network; APIError.notCached when nothing is stored

        var uncached = APIClient.Configuration(transport: transport)
        uncached.cache = nil  // no cache at all for clients made from this configuration
        // End snippet

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
        let restarted = try ResponseCache(directory: directory)
        let later = APIClient(
            baseURL: URL(string: "https://api.example.com/v1")!,
            configuration: APIClient.Configuration(transport: transport, cache: restarted))
        #expect(try await later.send(feed).source == .cache)
    }

    @Test func retries() async throws {
        let log = RequestLog()
        let transport = StubTransport { request in
            await log.record(request)
            let attempt = await log.requests.count
            return attempt < 3
                ? TransportResponse(statusCode: 503) : TransportResponse(statusCode: 201, body: Data("{}".utf8))
        }
        // Snippet: Retries.md, "Tune the policy"
        struct Order: Encodable, Sendable { let sku: String }

        var configuration = APIClient.Configuration(transport: transport)
        configuration.retryPolicy = RetryPolicy(
            maxAttempts: 5, baseDelay: .milliseconds(1), maximumDelay: .milliseconds(20))
        let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, configuration: configuration)

        var charge = APIRequest<Data>.post("/charges", body: Order(sku: "book-1"))
        charge.headers["Idempotency-Key"] = UUID().uuidString  // a POST is retried only with one
        let receipt = try await client.send(charge)
        print(receipt.attempts)  // 3 when the server answered 503, 503, then 201
        // End snippet
        #expect(receipt.attempts == 3 && receipt.statusCode == 201)

        // Snippet: Retries.md, "Decide for yourself"
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
        // End snippet
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
        // Snippet: EventsAndMetrics.md, "Watch what a call did"
        let events = client.events
        let response = try await client.send(APIRequest<Data>.get("/users/42"))

        var steps: [String] = []
        for await event in events {
            steps.append("\(event.kind)")
            if case .requestFinished = event.kind { break }
        }
        print(steps.joined(separator: "\n"))  // started …, cache miss, attempt 1 sent, ← 200 …, stored …, finished …
        print(response.source)  // network
        // End snippet
        #expect(steps.first?.hasPrefix("started GET") == true)
        #expect(steps.contains("cache miss"))
        #expect(response.source == .network)

        // Snippet: EventsAndMetrics.md, "Count what the client did"
        let metrics = client.metrics
        print("\(metrics.requests) requests, \(metrics.upstreamCalls) sent, \(metrics.cacheHits) from the cache")
        // End snippet
        #expect(metrics.requests == 1 && metrics.upstreamCalls == 1)

        // Snippet: EventsAndMetrics.md, "Print every event while debugging"
        let printer = client.printEvents()
        try await client.send(APIRequest<Data>.get("/users/42"))  // printed, one line per step
        printer.cancel()
        // End snippet
    }

    @Test func testingYourCode() async throws {
        // Snippet: TestingYourCode.md, "Use it in a test"
        let log = RequestLog()
        let transport = StubTransport { request in
            await log.record(request)
            return TransportResponse(statusCode: 200, body: Data(#"{"id": 42, "name": "Ada"}"#.utf8))
        }
        let client = APIClient(baseURL: URL(string: "https://api.test")!, configuration: .init(transport: transport))

        let user = try await client.send(APIRequest<User>.get("/users/42")).value

        #expect(user.name == "Ada")
        #expect(await log.requests.map(\.url.path) == ["/users/42"])
        // End snippet
    }

    @Test func testingWithAManualClock() async throws {
        // Snippet: TestingYourCode.md, "Test retries without waiting"
        let clock = ManualClock()
        let log = RequestLog()
        let transport = StubTransport { request in
            await log.record(request)
            let isFirst = await log.requests.count == 1
            return TransportResponse(statusCode: isFirst ? 503 : 204, headers: isFirst ? ["Retry-After": "2"] : [:])
        }
        let configuration = APIClient.Configuration(transport: transport, clock: clock)
        let client = APIClient(baseURL: URL(string: "https://api.test")!, configuration: configuration)

        let call = Task { try await client.send(APIRequest<Void>.get("/health")) }
        while !clock.pendingSleeps.contains(.seconds(2)) { await Task.yield() }  // waiting for Retry-After
        clock.advance(by: .seconds(2))
        let response = try await call.value

        #expect(response.statusCode == 204 && response.attempts == 2)
        // End snippet
    }
}
