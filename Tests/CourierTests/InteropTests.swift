import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The nginx that `Scripts/interop.sh` starts: where it listens, its document root and its access log.
enum Interop {
    static let environment = ProcessInfo.processInfo.environment
    static let baseURL = environment["COURIER_INTEROP_BASE_URL"].flatMap(URL.init(string:))
    static let root = environment["COURIER_INTEROP_ROOT"].map(URL.init(fileURLWithPath:))
    static let accessLog = environment["COURIER_INTEROP_ACCESS_LOG"]
    static var isConfigured: Bool { baseURL != nil && root != nil && accessLog != nil }

    /// One access log line: `$status $request_method $request_uri inm=$http_if_none_match`.
    struct Entry: Equatable {
        let status: Int
        let method: String
        let uri: String
        let ifNoneMatch: String
    }

    /// The access log entries for `uri`, once there are at least `count` (nginx writes a line after the
    /// response is sent, so the client can be a moment ahead of the log).
    static func entries(for uri: String, atLeast count: Int) async -> [Entry] {
        var found: [Entry] = []
        _ = await ReliabilityKit.poll(seconds: 10) {
            found = read().filter { $0.uri == uri }
            return found.count >= count
        }
        return found
    }

    private static func read() -> [Entry] {
        guard let accessLog, let text = try? String(contentsOfFile: accessLog, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
            guard fields.count == 4, let status = Int(fields[0]) else { return nil }
            return Entry(
                status: status, method: String(fields[1]), uri: String(fields[2]),
                ifNoneMatch: String(fields[3].dropFirst("inm=".count)))
        }
    }

    static func client(
        cache: ResponseCache? = ResponseCache(), retryPolicy: RetryPolicy = .never,
        authenticator: TokenRefresher? = nil, clock: any Clock<Duration> = ContinuousClock()
    ) throws -> APIClient {
        APIClient(
            baseURL: try #require(baseURL),
            configuration: .init(
                transport: URLSessionTransport(), cache: cache, retryPolicy: retryPolicy, authenticator: authenticator,
                clock: clock))
    }
}

/// Courier against a real, independent server: nginx, started by `Scripts/interop.sh` with
/// `Scripts/interop/nginx.conf`. Skipped unless `COURIER_INTEROP_BASE_URL` (and the root and log) are set.
@Suite(
    .enabled(if: Interop.isConfigured, "run Scripts/interop.sh, which starts nginx and sets COURIER_INTEROP_*"),
    .timeLimit(.minutes(1)))
struct InteropTests {
    @Test func anETagRevalidationAgainstNginxCostsA304AndServesTheCachedBody() async throws {
        let cache = ResponseCache()
        let client = try Interop.client(cache: cache)
        let path = "/etag/resource.json"

        let first = try await client.send(APIRequest<Data>.get(path))
        let second = try await client.send(APIRequest<Data>.get(path))

        let etag = try #require(first.headers["ETag"])
        #expect(first.source == .network && first.statusCode == 200)
        #expect(second.source == .revalidated && second.statusCode == 200)
        #expect(second.value == first.value)
        #expect(String(decoding: second.value, as: UTF8.self) == #"{"id":1,"name":"etag"}"#)
        let log = await Interop.entries(for: path, atLeast: 2)
        #expect(log.map(\.status) == [200, 304])
        #expect(log.last?.ifNoneMatch == etag)
        #expect(await cache.count == 1)
        #expect(await cache.statistics.revalidations == 1)
        let drained = await ReliabilityKit.expectDrained(client, cacheEntries: 1)
        ReliabilityKit.record(
            "interop (nginx)", "ETag revalidation of a static file served with max-age=0", cases: 2,
            outcome: "200 then 304 in nginx's log; the 304 served the cached body (source .revalidated)",
            leaked: !drained)
    }

    @Test func nginxsTokenGateDrivesExactlyOneRefreshForTwentyCallers() async throws {
        let refreshes = Locked(0)
        let refresher = TokenRefresher(credential: Credential(accessToken: "secret-interop-old", identity: "alice")) {
            old in
            refreshes.withLock { $0 += 1 }
            return Credential(accessToken: "secret-interop-new", identity: old?.identity ?? "alice")
        }
        let client = try Interop.client(cache: nil, authenticator: refresher)
        let path = "/gated/me.json"
        let callers = 20

        let calls = (0..<callers).map { _ in
            Task { try await client.send(APIRequest<AuthTestKit.Echo>(path: path, coalescing: .never)) }
        }
        var tokens: [String] = []
        for call in calls { tokens.append(try await call.value.value.token) }

        #expect(tokens == Array(repeating: "secret-interop-new", count: callers))
        #expect(await refresher.refreshCount == 1)
        #expect(refreshes.withLock { $0 } == 1)
        let log = await Interop.entries(for: path, atLeast: callers + 1)
        let refused = log.filter { $0.status == 401 }.count
        #expect(log.filter { $0.status == 200 }.count == callers)
        #expect((1...callers).contains(refused))
        #expect(log.count == callers + refused)
        let drained = await ReliabilityKit.expectDrained(client)
        ReliabilityKit.record(
            "interop (nginx)", "token gate (401 unless Bearer <new>), 20 uncoalesced callers", cases: callers,
            outcome: "\(refused) × 401 then 20 × 200 in nginx's log; exactly 1 refresh", leaked: !drained)
    }

    @Test func fiftyIdenticalCallsToASlowNginxEndpointSendOneRequest() async throws {
        let client = try Interop.client(cache: nil)
        let path = "/slow/big.bin"
        let callers = 50

        let calls = (0..<callers).map { _ in Task { try await client.send(APIRequest<Data>.get(path)) } }
        var responses: [APIResponse<Data>] = []
        for call in calls { responses.append(try await call.value) }

        #expect(responses.allSatisfy { $0.value.count == 262_144 && $0.statusCode == 200 })
        #expect(responses.filter(\.joined).count == callers - 1)
        let log = await Interop.entries(for: path, atLeast: 1)
        #expect(log.map(\.status) == [200])
        let drained = await ReliabilityKit.expectDrained(client)
        ReliabilityKit.record(
            "interop (nginx)", "50 concurrent identical GETs of a 256 KiB file sent at 400 KiB/s", cases: callers,
            outcome: "exactly 1 request in nginx's log; 49 callers joined; all got 262,144 bytes", leaked: !drained)
    }

    @Test func a503WithRetryAfterFromNginxIsRetriedOnTheInjectedClock() async throws {
        let clock = TestClock()
        let client = try Interop.client(cache: nil, retryPolicy: RetryPolicy(jitter: .none), clock: clock)
        let path = "/later/status.json"
        let marker = try #require(Interop.root).appendingPathComponent("ready")

        let call = Task { try await client.send(APIRequest<Data>.get(path)) }
        let sleeping = await ReliabilityKit.poll { clock.pendingSleeps.contains(.seconds(1)) }
        try #require(sleeping, "the client never slept for Retry-After: 1")
        #expect(await Interop.entries(for: path, atLeast: 1).map(\.status) == [503])
        try Data().write(to: marker)
        defer { try? FileManager.default.removeItem(at: marker) }
        clock.advance(by: .seconds(1))
        let response = try await call.value

        #expect(response.statusCode == 200 && response.attempts == 2)
        #expect(clock.requestedSleeps.contains(.seconds(1)))
        let log = await Interop.entries(for: path, atLeast: 2)
        #expect(log.map(\.status) == [503, 200])
        let drained = await ReliabilityKit.expectDrained(client)
        ReliabilityKit.record(
            "interop (nginx)", "503 with Retry-After: 1 until a marker file exists", cases: 1,
            outcome: "503 then 200 in nginx's log; slept exactly 1 s on the test clock (no real wait)",
            leaked: !drained)
    }
}
