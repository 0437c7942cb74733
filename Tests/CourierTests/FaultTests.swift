import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Broken servers over real sockets: `APIClient` + `URLSessionTransport` against a `TestServer` that resets,
/// closes, truncates, stalls, lies and floods. Every fault ends in a clear `APIError` (or an exact success),
/// and leaves nothing behind in the coalescer, the refresher or the cache.
@Suite(.timeLimit(.minutes(1))) struct FaultTests {
    /// A server, and a client of it with its own clock, cache and token refresher.
    private struct Rig {
        let server: TestServer
        let clock = TestClock()
        let cache = ResponseCache()
        let refresher: TokenRefresher
        let client: APIClient

        init(retryPolicy: RetryPolicy = .never, timeout: Duration = .seconds(60)) throws {
            server = try TestServer()
            refresher = TokenRefresher(credential: Credential(accessToken: "secret-fault-1", identity: "alice")) {
                old in Credential(accessToken: "secret-fault-2", identity: old?.identity ?? "alice")
            }
            var configuration = APIClient.Configuration(
                transport: URLSessionTransport(), cache: cache, retryPolicy: retryPolicy, authenticator: refresher,
                timeout: timeout, clock: clock)
            configuration.headers["User-Agent"] = "courier-fault-tests"
            client = APIClient(baseURL: server.baseURL, configuration: configuration)
        }

        /// Sends `GET path` from `callers` tasks at once and returns each caller's error case name, or
        /// `"success"`.
        func outcomes(_ path: String, callers: Int = 1) async -> [String] {
            let calls = (0..<callers).map { _ in
                Task { [client] in
                    do {
                        _ = try await client.send(APIRequest<Data>.get(path))
                        return "success"
                    } catch {
                        return ReliabilityKit.name(of: error)
                    }
                }
            }
            var names: [String] = []
            for call in calls { names.append(await call.value) }
            return names
        }

        /// `reply`, once `callers` callers wait on the client's coalescer: on a loaded machine a caller that started
        /// late would otherwise find the flight over and send a request of its own. Bounded, like every wait here.
        func whenJoined(_ callers: Int, _ reply: TestServer.Reply) async -> TestServer.Reply {
            for _ in 0..<100_000 {
                if await client.coalescer.waiterCount >= callers { break }
                await Task.yield()
            }
            return reply
        }

        /// Expects every table empty (and `cacheEntries` entries cached), and that no refresh happened.
        func expectDrained(
            cacheEntries: Int = 0, refreshes: Int = 0, sourceLocation: SourceLocation = #_sourceLocation
        ) async -> Bool {
            let drained = await ReliabilityKit.expectDrained(
                client, cacheEntries: cacheEntries, sourceLocation: sourceLocation)
            let refreshCount = await refresher.refreshCount
            #expect(refreshCount == refreshes, sourceLocation: sourceLocation)
            return drained && refreshCount == refreshes
        }
    }

    private static func head(_ lines: String...) -> Data {
        Data((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    /// Moves `clock` through the retry delays, each once its sleep has started. Polls in a bounded loop rather
    /// than waiting, so a retry that never comes fails the test instead of hanging it.
    private static func advance(
        _ clock: TestClock, through delays: [Duration], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        for delay in delays {
            let sleeping = await ReliabilityKit.poll { clock.pendingSleeps.contains(delay) }
            try #require(sleeping, "no sleep of \(delay) started", sourceLocation: sourceLocation)
            clock.advance(by: delay)
        }
    }

    // MARK: Broken Connections

    @Test func aConnectionResetInTheMiddleOfTheBodyIsAConnectionLoss() async throws {
        let rig = try Rig()
        defer { rig.server.shutdown() }
        let bytes =
            Self.head("HTTP/1.1 200 OK", "Content-Type: application/json", "Content-Length: 100000")
            + Data(repeating: UInt8(ascii: "x"), count: 20_000)
        rig.server.route("GET", "/reset") { [rig] _ in await rig.whenJoined(10, .reset(after: bytes)) }

        let outcomes = await rig.outcomes("/reset", callers: 10)

        #expect(outcomes == Array(repeating: "transport(.connectionLost)", count: 10))
        #expect(rig.server.hits("/reset") == 1)
        let drained = await rig.expectDrained()
        ReliabilityKit.record(
            "fault", "connection reset (RST) after 20 of 100 kB of body, 10 coalesced callers", cases: 10,
            outcome: "APIError.transport(.connectionLost) for all 10; 1 request", leaked: !drained)
    }

    @Test func aCloseBeforeTheStatusLineIsABadServerResponseAndIsNotRetried() async throws {
        let rig = try Rig(retryPolicy: RetryPolicy(jitter: .none))
        defer { rig.server.shutdown() }
        rig.server.route("GET", "/closed") { [rig] _ in await rig.whenJoined(5, .close) }

        let outcomes = await rig.outcomes("/closed", callers: 5)

        // URLSession (libcurl) reports an empty reply as a bad server response, which is not transient; it
        // already retries a reused keep-alive connection that the server had closed by itself.
        #expect(outcomes == Array(repeating: "transport(.badServerResponse)", count: 5))
        #expect(rig.server.hits("/closed") == 1)
        #expect(rig.clock.requestedSleeps.allSatisfy { $0 == .seconds(60) })
        let drained = await rig.expectDrained()
        ReliabilityKit.record(
            "fault", "connection closed before the status line (default retry policy, 5 coalesced callers)",
            cases: 5, outcome: "APIError.transport(.badServerResponse) for all 5; 1 request, no retry",
            leaked: !drained)
    }

    @Test func aBodyShorterThanItsContentLengthIsNeverAcceptedOrCached() async throws {
        let rig = try Rig()
        defer { rig.server.shutdown() }
        let bytes =
            Self.head("HTTP/1.1 200 OK", "Content-Length: 1000", "Cache-Control: max-age=600", "ETag: \"v1\"")
            + Data("only ten b".utf8)
        rig.server.route("GET", "/short") { _ in .raw(bytes, close: true) }

        let outcomes = await rig.outcomes("/short")

        // libcurl: "transfer closed with 990 bytes remaining to read", URLError.unknown: kept as the cause.
        #expect(outcomes == ["transport(.connectionLost)"])
        #expect(rig.server.hits("/short") == 1)
        let drained = await rig.expectDrained(cacheEntries: 0)
        ReliabilityKit.record(
            "fault", "body shorter than Content-Length (10 of 1000 bytes, cacheable headers)", cases: 1,
            outcome: "APIError.transport(.connectionLost) (libcurl's \"transfer closed with 990 bytes remaining\" "
                + "kept as the cause); nothing cached", leaked: !drained)
    }

    @Test func aGetWhoseBodyEndsShortIsRetriedAsALostConnection() async throws {
        let rig = try Rig(retryPolicy: RetryPolicy(jitter: .none))
        defer { rig.server.shutdown() }
        let short = Self.head("HTTP/1.1 200 OK", "Content-Length: 1000") + Data("only ten b".utf8)
        let calls = Locked(0)
        rig.server.route("GET", "/short-once") { _ in
            let first = calls.withLock { count in
                count += 1
                return count == 1
            }
            return first ? .raw(short, close: true) : .text("whole")
        }

        let response = Task { try await rig.client.send(APIRequest<Data>.get("/short-once")) }
        try await Self.advance(rig.clock, through: [.milliseconds(500)])

        let result = try await response.value
        #expect(result.value == Data("whole".utf8))
        #expect(result.attempts == 2)
        #expect(rig.server.hits("/short-once") == 2)
        let drained = await rig.expectDrained()
        ReliabilityKit.record(
            "fault", "GET whose first body ends before its Content-Length (default retry policy)", cases: 1,
            outcome: "retried as a lost connection; the second attempt succeeds", leaked: !drained)
    }

    @Test(arguments: [
        "HTTP/1.1 abc Nope", "SSH-2.0-OpenSSH_9.6", "HTTP/9.9 200 OK", "\u{1}\u{2}garbage", "HTTP/1.1 2000 OK",
    ])
    func aGarbageStatusLineIsABadServerResponse(statusLine: String) async throws {
        let rig = try Rig()
        defer { rig.server.shutdown() }
        rig.server.route("GET", "/garbage") { _ in .raw(Self.head(statusLine, "Content-Length: 2") + Data("{}".utf8)) }

        let outcomes = await rig.outcomes("/garbage")

        #expect(outcomes == ["transport(.badServerResponse)"])
        let drained = await rig.expectDrained()
        ReliabilityKit.record(
            "fault", "garbage status line: \(statusLine.debugDescription)", cases: 1,
            outcome: outcomes[0] == "transport(.badServerResponse)"
                ? "APIError.transport(.badServerResponse)" : outcomes[0], leaked: !drained)
    }

    // MARK: Big and Strange Responses

    @Test func aTenMegabyteBodyArrivesExactlyAndIsTooLargeToCache() async throws {
        let rig = try Rig()
        defer { rig.server.shutdown() }
        // 160 random 64 KiB blocks, each stamped with its index, so a dropped or repeated block shows.
        var generator = ReliabilityKit.SplitMix64(seed: 10)
        let block = (0..<(64 << 10)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let body = (0..<160).reduce(into: Data(capacity: 10 << 20)) { body, index in
            body.append(UInt8(index))
            body.append(contentsOf: block.dropFirst())
        }
        rig.server.route("GET", "/big") { _ in
            .init(status: 200, headers: [("Cache-Control", "max-age=600"), ("ETag", "\"big\"")], body: body)
        }

        let response = try await rig.client.send(APIRequest<Data>.get("/big"))

        #expect(response.value.count == 10 << 20)
        #expect(response.value == body)
        #expect(response.attempts == 1)
        let drained = await rig.expectDrained(cacheEntries: 0)
        ReliabilityKit.record(
            "fault", "10 MiB body (random blocks, cacheable headers)", cases: 1,
            outcome: "success, byte-for-byte equal; not cached (over the 4 MiB entry limit)", leaked: !drained)
    }

    @Test func fiveThousandResponseHeadersAreAllDelivered() async throws {
        let rig = try Rig()
        defer { rig.server.shutdown() }
        let headers = (0..<5_000).map { ("X-Fault-\($0)", "value-\($0)") }
        rig.server.route("GET", "/headers") { _ in .init(status: 200, headers: headers, body: Data("{}".utf8)) }

        let response = try await rig.client.send(APIRequest<Data>.get("/headers"))

        #expect(response.headers.values(for: "X-Fault-0") == ["value-0"])
        #expect(response.headers.values(for: "x-fault-4999") == ["value-4999"])
        #expect(response.headers.count { $0.name.lowercased().hasPrefix("x-fault-") } == 5_000)
        let drained = await rig.expectDrained()
        ReliabilityKit.record(
            "fault", "5,000 response header fields (~110 kB of head)", cases: 1,
            outcome: "success, all 5,000 fields delivered", leaked: !drained)
    }

    // MARK: Silence

    @Test func aServerThatStallsForeverEndsAtTheDeadline() async throws {
        let rig = try Rig(timeout: .seconds(5))
        defer { rig.server.shutdown() }
        rig.server.route("GET", "/stall") { _ in .stall }

        let call = Task { await rig.outcomes("/stall", callers: 5) }
        await rig.server.waitForHits("/stall", count: 1)
        // Every caller waits on the flight before the clock moves: on a loaded machine a caller whose task started
        // after the deadline passed would send a request of its own, and wait for a time that never comes.
        for _ in 0..<100_000 where await rig.client.coalescer.waiterCount < 5 { await Task.yield() }
        try await Self.advance(rig.clock, through: [.seconds(5)])

        #expect(await call.value == Array(repeating: "timedOut", count: 5))
        #expect(rig.server.hits("/stall") == 1)
        let drained = await rig.expectDrained()
        ReliabilityKit.record(
            "fault", "server accepts, reads the request, never answers (5 coalesced callers)", cases: 5,
            outcome: "APIError.timedOut(5 s) on the injected clock for all 5; 1 request", leaked: !drained)
    }

    @Test func aStallingServerIsRetriedOnlyAsOftenAsThePolicySays() async throws {
        let rig = try Rig(retryPolicy: RetryPolicy(jitter: .none), timeout: .seconds(5))
        defer { rig.server.shutdown() }
        rig.server.route("GET", "/stall") { _ in .stall }

        let call = Task { await rig.outcomes("/stall") }
        for (attempt, backoff) in [(1, Duration.milliseconds(500)), (2, .seconds(1)), (3, nil)] {
            await rig.server.waitForHits("/stall", count: attempt)
            try await Self.advance(rig.clock, through: [.seconds(5)])
            if let backoff { try await Self.advance(rig.clock, through: [backoff]) }
        }

        #expect(await call.value == ["timedOut"])
        #expect(rig.server.hits("/stall") == 3)
        let drained = await rig.expectDrained()
        ReliabilityKit.record(
            "fault", "stalling server with the default retry policy", cases: 1,
            outcome: "3 attempts, each cut at 5 s, then APIError.timedOut", leaked: !drained)
    }

    // MARK: Storms

    @Test func aServiceUnavailableStormIsRetriedExactlyMaxAttemptsTimesForAllCallers() async throws {
        let rig = try Rig(retryPolicy: RetryPolicy(maxAttempts: 4, jitter: .none))
        defer { rig.server.shutdown() }
        rig.server.route("GET", "/storm") { _ in .text("overloaded", status: 503) }

        let call = Task { await rig.outcomes("/storm", callers: 20) }
        // All 20 wait on the flight (asleep before its first retry) before the clock moves; see the stall test.
        for _ in 0..<100_000 where await rig.client.coalescer.waiterCount < 20 { await Task.yield() }
        try await Self.advance(rig.clock, through: [.milliseconds(500), .seconds(1), .seconds(2)])

        #expect(await call.value == Array(repeating: "unacceptableStatus(503)", count: 20))
        #expect(rig.server.hits("/storm") == 4)
        #expect(
            rig.clock.requestedSleeps.filter { $0 < .seconds(60) } == [.milliseconds(500), .seconds(1), .seconds(2)])
        let drained = await rig.expectDrained()
        ReliabilityKit.record(
            "fault", "503 storm, 20 coalesced callers, maxAttempts 4", cases: 20,
            outcome: "exactly 4 requests (0.5/1/2 s backoff); APIError.unacceptableStatus(503) for all 20",
            leaked: !drained)
    }

    @Test func aMixedFiveHundredsStormEndsWithTheLastStatus() async throws {
        let rig = try Rig(retryPolicy: RetryPolicy(maxAttempts: 3, jitter: .none))
        defer { rig.server.shutdown() }
        let statuses = [500, 502, 504]
        let calls = Locked(0)
        rig.server.route("GET", "/mixed") { _ in
            let call = calls.withLock { count in
                count += 1
                return count
            }
            return .text("failing", status: statuses[(call - 1) % statuses.count])
        }

        let call = Task { await rig.outcomes("/mixed") }
        try await Self.advance(rig.clock, through: [.milliseconds(500), .seconds(1)])

        #expect(await call.value == ["unacceptableStatus(504)"])
        #expect(rig.server.hits("/mixed") == 3)
        let drained = await rig.expectDrained()
        ReliabilityKit.record(
            "fault", "500, 502, 504 in a row (maxAttempts 3)", cases: 1,
            outcome: "exactly 3 requests; APIError.unacceptableStatus(504)", leaked: !drained)
    }

    @Test func aPostIsNotRetriedAndARetryAfterBeyondTheCapStopsAtOnce() async throws {
        let rig = try Rig(retryPolicy: RetryPolicy(jitter: .none))
        defer { rig.server.shutdown() }
        rig.server.route("POST", "/orders") { _ in .text("down", status: 503) }
        rig.server.route("GET", "/later") { _ in .text("down", status: 503, headers: [("Retry-After", "3600")]) }

        let post = await Self.error(of: rig.client, APIRequest<Void>.post("/orders", body: ["item": "book"]))
        let later = await rig.outcomes("/later")

        #expect(post.map(ReliabilityKit.name(of:)) == "unacceptableStatus(503)")
        #expect(later == ["unacceptableStatus(503)"])
        #expect(rig.server.hits("/orders") == 1)
        #expect(rig.server.hits("/later") == 1)
        let drained = await rig.expectDrained()
        ReliabilityKit.record(
            "fault", "503 to a POST; 503 with Retry-After: 3600 to a GET", cases: 2,
            outcome: "1 request each (POST not idempotent; wait over the 60 s cap); unacceptableStatus(503)",
            leaked: !drained)
    }

    @Test func aServerThatRefusesEveryTokenCostsOneRefreshAndOneResend() async throws {
        let rig = try Rig()
        defer { rig.server.shutdown() }
        rig.server.route("GET", "/me") { [rig] _ in
            await rig.whenJoined(
                10, .json(#"{"error":"invalid_token"}"#, status: 401, headers: [("WWW-Authenticate", "Bearer")]))
        }

        let outcomes = await rig.outcomes("/me", callers: 10)

        #expect(outcomes == Array(repeating: "unauthorized", count: 10))
        #expect(rig.server.hits("/me") == 2)
        let drained = await rig.expectDrained(refreshes: 1)
        ReliabilityKit.record(
            "fault", "401 for every token, 10 coalesced callers", cases: 10,
            outcome: "1 refresh, 1 resend, then APIError.unauthorized for all 10", leaked: !drained)
    }

    @Test func aFaultDuringRevalidationKeepsTheStaleEntryAndFails() async throws {
        let rig = try Rig()
        defer { rig.server.shutdown() }
        let served = Locked(0)
        rig.server.route("GET", "/doc") { _ in
            let first = served.withLock { count in
                count += 1
                return count == 1
            }
            return first ? .json("{}", headers: [("Cache-Control", "max-age=0"), ("ETag", "\"d1\"")]) : .close
        }

        let first = await rig.outcomes("/doc")
        let second = await rig.outcomes("/doc")

        #expect(first == ["success"])
        #expect(second == ["transport(.badServerResponse)"])
        #expect(rig.server.requests.last?.header("If-None-Match") == "\"d1\"")
        let drained = await rig.expectDrained(cacheEntries: 1)
        ReliabilityKit.record(
            "fault", "connection closed during revalidation of a stale entry", cases: 1,
            outcome: "APIError.transport(.badServerResponse); stale entry kept for the next try, not served",
            leaked: !drained)
    }

    private static func error(of client: APIClient, _ request: APIRequest<Void>) async -> (any Error)? {
        do {
            _ = try await client.send(request)
            return nil
        } catch {
            return error
        }
    }
}
