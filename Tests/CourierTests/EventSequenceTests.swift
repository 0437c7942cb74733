import Foundation
import Testing

@testable import Courier

private typealias Kit = EventTestKit

/// For every path a call can take, the exact steps its events report, in order, and the counters it moves.
@Suite(.timeLimit(.minutes(1))) struct EventSequenceTests {
    @Test func aNetworkCallReportsItsAttemptAndWhatTheCacheStored() async throws {
        let transport = MockTransport.responding(headers: ["Cache-Control": "max-age=60"], body: "hello")
        let cache = ResponseCache()
        let client = Kit.makeClient(transport, cache: cache)
        let events = client.events
        _ = try await client.send(APIRequest<Data>.get("/users", headers: ["Accept": "text/plain"]))
        let bytes = await cache.totalBytes
        #expect(
            await Kit.collect(events, from: client.eventLog).map(\.kind) == [
                Kit.started("/users"),
                .cacheMiss,
                .attemptSent(attempt: 1, headers: ["Accept": "text/plain"]),
                .responseReceived(attempt: 1, status: 200, bytes: 5, duration: .zero),
                .stored(bytes: bytes),
                .requestFinished(source: .network, status: 200, duration: .zero),
            ])
        var expected = APIClient.Metrics()
        (expected.requests, expected.upstreamCalls, expected.cacheMisses) = (1, 1, 1)
        #expect(client.metrics == expected)
    }

    @Test func aFreshHitReportsOnlyTheCache() async throws {
        let transport = MockTransport.responding(headers: ["Cache-Control": "max-age=60"], body: "hello")
        let client = Kit.makeClient(transport, cache: ResponseCache())
        _ = try await client.send(APIRequest<Data>.get("/users"))
        let events = client.events
        let response = try await client.send(APIRequest<Data>.get("/users"))
        #expect(response.source == .cache)
        #expect(
            await Kit.collect(events, from: client.eventLog).map(\.kind) == [
                Kit.started("/users"),
                .cacheHit(stale: false),
                .requestFinished(source: .cache, status: 200, duration: .zero),
            ])
        #expect(client.metrics.cacheHits == 1)
        #expect(client.metrics.upstreamCalls == 1)
    }

    @Test func aStoredUnacceptableStatusServedFromTheCacheFailsTheCallAndReportsIt() async throws {
        let transport = MockTransport.responding(
            status: 404, headers: ["Cache-Control": "max-age=60"], body: "no such user")
        let client = Kit.makeClient(transport, cache: ResponseCache())
        await #expect(throws: APIError.self) { try await client.send(APIRequest<Data>.get("/users/9")) }
        let events = client.events
        let error = await #expect(throws: APIError.self) { try await client.send(APIRequest<Data>.get("/users/9")) }
        guard case .unacceptableStatus(let response)? = error else {
            Issue.record("expected unacceptableStatus, got \(String(describing: error))")
            return
        }
        #expect(response.statusCode == 404 && response.body == Data("no such user".utf8))
        let kinds = await Kit.collect(events, from: client.eventLog).map(\.kind)
        #expect(kinds.count == 3)
        #expect(kinds.prefix(2) == [Kit.started("/users/9"), .cacheHit(stale: false)])
        guard case .requestFailed? = kinds.last else {
            Issue.record("expected requestFailed last, got \(kinds)")
            return
        }
        #expect(transport.callCount == 1, "the second call was answered from the cache")
        #expect(client.metrics.failures == 2 && client.metrics.cacheHits == 1)
    }

    @Test func badInputFailsBeforeAnythingIsLookedUpOrSentAndReportsIt() async throws {
        let transport = MockTransport.responding(body: "unused")
        let client = Kit.makeClient(transport, cache: ResponseCache())
        let events = client.events
        var request = APIRequest<Data>.get("/users")
        request.method = RequestMethod(rawValue: "GET /admin HTTP/1.1\r\nX:")
        await #expect(throws: APIError.self) { try await client.send(request) }
        let kinds = await Kit.collect(events, from: client.eventLog).map(\.kind)
        #expect(kinds.count == 2)
        guard case .requestFailed? = kinds.last else {
            Issue.record("expected requestFailed last, got \(kinds)")
            return
        }
        #expect(transport.callCount == 0)
        #expect(client.metrics.failures == 1 && client.metrics.cacheMisses == 0)
    }

    @Test func aJoinerReportsTheLeaderInsteadOfAttempts() async throws {
        let gate = CoalescerTestKit.Gate()
        let transport = MockTransport { _, _ in
            _ = await gate.wait()
            return .text(200, "shared")
        }
        let client = Kit.makeClient(transport)
        let events = client.events
        let leader = Task { try await client.send(APIRequest<Data>.get("/feed")) }
        try await CoalescerTestKit.waitForWaiters(1, on: client.coalescer)
        let joiner = Task { try await client.send(APIRequest<Data>.get("/feed")) }
        try await CoalescerTestKit.waitForWaiters(2, on: client.coalescer)
        await gate.open()
        _ = try await (leader.value, joiner.value)
        let all = await Kit.collect(events, from: client.eventLog)
        #expect(
            Kit.kinds(all, of: 1) == [
                Kit.started("/feed"),
                .attemptSent(attempt: 1, headers: [:]),
                .responseReceived(attempt: 1, status: 200, bytes: 6, duration: .zero),
                .requestFinished(source: .network, status: 200, duration: .zero),
            ])
        #expect(
            Kit.kinds(all, of: 2) == [
                Kit.started("/feed"),
                .joinedFlight(leader: CallID(rawValue: 1)),
                .requestFinished(source: .network, status: 200, duration: .zero),
            ])
        let joinedAt = try #require(all.firstIndex { $0.kind == .joinedFlight(leader: CallID(rawValue: 1)) })
        let receivedAt = try #require(all.firstIndex { if case .responseReceived = $0.kind { true } else { false } })
        #expect(receivedAt < joinedAt)
        #expect(client.metrics.joined == 1)
        #expect(client.metrics.upstreamCalls == 1)
        #expect(client.metrics.requests == 2)
    }

    @Test func aNotModifiedReportsTheRevalidation() async throws {
        let transport = MockTransport { request, _ in
            guard request.headers["If-None-Match"] == #""v1""# else {
                return .text(200, "body", headers: ["Cache-Control": "max-age=0", "ETag": #""v1""#])
            }
            return .text(304)
        }
        let client = Kit.makeClient(transport, cache: ResponseCache())
        _ = try await client.send(APIRequest<Data>.get("/doc"))
        let events = client.events
        let response = try await client.send(APIRequest<Data>.get("/doc"))
        #expect(response.source == .revalidated)
        #expect(
            await Kit.collect(events, from: client.eventLog).map(\.kind) == [
                Kit.started("/doc"),
                .revalidationSent,
                .attemptSent(attempt: 1, headers: ["If-None-Match": #""v1""#]),
                .responseReceived(attempt: 1, status: 304, bytes: 0, duration: .zero),
                .revalidated,
                .requestFinished(source: .revalidated, status: 200, duration: .zero),
            ])
        #expect(client.metrics.cacheRevalidations == 1)
        #expect(client.metrics.cacheMisses == 2)
    }

    @Test func aRetryReportsTheFailedAttemptTheDelayAndTheNextAttempt() async throws {
        let clock = TestClock()
        let transport = MockTransport.sequence([
            .failure(.transport(.connectionLost, underlying: URLError(.networkConnectionLost))),
            .success(.text(503)), .success(.text(200, "ok")),
        ])
        let client = Kit.makeClient(transport, retryPolicy: RetryPolicy(jitter: .none), clock: clock)
        let events = client.events
        let call = Task { try await client.send(APIRequest<Data>.get("/flaky")) }
        for delay in [Duration.milliseconds(500), .seconds(1)] {
            await clock.waitForSleeper(of: delay)
            clock.advance(by: delay)
        }
        #expect(try await call.value.attempts == 3)
        let all = await Kit.collect(events, from: client.eventLog)
        let lost = try #require(
            all.lazy.compactMap { event -> String? in
                guard case .retryScheduled(_, _, .failure(let reason)) = event.kind else { return nil }
                return reason
            }.first)
        #expect(lost.hasPrefix("Transport failure: the connection was lost"))
        #expect(
            all.map(\.kind) == [
                Kit.started("/flaky"),
                .attemptSent(attempt: 1, headers: [:]),
                .retryScheduled(attempt: 1, delay: .milliseconds(500), reason: .failure(lost)),
                .attemptSent(attempt: 2, headers: [:]),
                .responseReceived(attempt: 2, status: 503, bytes: 0, duration: .zero),
                .retryScheduled(attempt: 2, delay: .seconds(1), reason: .status(503)),
                .attemptSent(attempt: 3, headers: [:]),
                .responseReceived(attempt: 3, status: 200, bytes: 2, duration: .zero),
                .requestFinished(source: .network, status: 200, duration: .milliseconds(1_500)),
            ])
        let (zero, half, end) = (Duration.zero, Duration.milliseconds(500), Duration.milliseconds(1_500))
        #expect(all.map(\.at) == [zero, zero, zero, half, half, half, end, end, end])
        #expect(client.metrics.retries == 2)
        #expect(client.metrics.upstreamCalls == 3)
    }

    @Test func aRejectedTokenReportsTheRefreshAndTheResend() async throws {
        let issuer = AuthTestKit.Issuer(date: AuthTestKit.ManualDate())
        let refresher = AuthTestKit.refresher(AuthTestKit.credential(), issuer: issuer)
        let transport = AuthTestKit.tokenCheckingTransport()
        let client = Kit.makeClient(transport, authenticator: refresher)
        let events = client.events
        _ = try await client.send(APIRequest<Data>.get("/me"))
        let redacted: HeaderFields = ["Authorization": "<redacted>"]
        let (rejected, accepted) = (
            #"{"error":"invalid_token"}"#.utf8.count, #"{"token":"secret-access-1"}"#.utf8.count
        )
        #expect(
            await Kit.collect(events, from: client.eventLog).map(\.kind) == [
                Kit.started("/me"),
                .attemptSent(attempt: 1, headers: redacted),
                .responseReceived(attempt: 1, status: 401, bytes: rejected, duration: .zero),
                .tokenRefreshStarted,
                .tokenRefreshSucceeded,
                .attemptSent(attempt: 2, headers: redacted),
                .responseReceived(attempt: 2, status: 200, bytes: accepted, duration: .zero),
                .requestFinished(source: .network, status: 200, duration: .zero),
            ])
        #expect(client.metrics.tokenRefreshes == 1)
        #expect(client.metrics.upstreamCalls == 2)
    }

    @Test func anExpiredTokenIsRefreshedBeforeTheFirstAttempt() async throws {
        let issuer = AuthTestKit.Issuer(date: AuthTestKit.ManualDate())
        let refresher = AuthTestKit.refresher(AuthTestKit.credential(expiresIn: 0), issuer: issuer)
        let client = Kit.makeClient(AuthTestKit.tokenCheckingTransport(), authenticator: refresher)
        let events = client.events
        _ = try await client.send(APIRequest<Data>.get("/me"))
        let accepted = #"{"token":"secret-access-1"}"#.utf8.count
        #expect(
            await Kit.collect(events, from: client.eventLog).map(\.kind) == [
                Kit.started("/me"),
                .tokenRefreshStarted,
                .tokenRefreshSucceeded,
                .attemptSent(attempt: 1, headers: ["Authorization": "<redacted>"]),
                .responseReceived(attempt: 1, status: 200, bytes: accepted, duration: .zero),
                .requestFinished(source: .network, status: 200, duration: .zero),
            ])
    }

    @Test func aFailedRefreshReportsWhyAndFailsTheCall() async throws {
        let issuer = AuthTestKit.Issuer(fails: true, date: AuthTestKit.ManualDate())
        let refresher = AuthTestKit.refresher(nil, issuer: issuer)
        let client = Kit.makeClient(AuthTestKit.tokenCheckingTransport(), authenticator: refresher)
        let events = client.events
        let error = await #expect(throws: APIError.self) { try await client.send(APIRequest<Data>.get("/me")) }
        let reason = "Authentication failed: the credential could not be refreshed (the token endpoint is down)."
        #expect(
            await Kit.collect(events, from: client.eventLog).map(\.kind) == [
                Kit.started("/me"),
                .tokenRefreshStarted,
                .tokenRefreshFailed(reason: reason),
                .requestFailed(error: try #require(error).description, duration: .zero),
            ])
        #expect(client.metrics.failures == 1)
    }

    @Test func anUnsafeCallReportsWhatItInvalidatedAndAFullCacheWhatItEvicted() async throws {
        let transport = MockTransport { request, _ in
            .text(200, "x", headers: request.method == .get ? ["Cache-Control": "max-age=60"] : [:])
        }
        let cache = ResponseCache(maxEntries: 1)
        let client = Kit.makeClient(transport, cache: cache)
        _ = try await client.send(APIRequest<Data>.get("/a"))
        let events = client.events
        _ = try await client.send(APIRequest<Data>.get("/b"))
        _ = try await client.send(APIRequest<Void>.delete("/b"))
        let kinds = await Kit.collect(events, from: client.eventLog).map(\.kind)
        let stored = kinds.compactMap { kind -> Int? in
            if case .stored(let bytes) = kind { bytes } else { nil }
        }
        try #require(stored.count == 1)
        #expect(stored[0] > 1)
        #expect(
            kinds == [
                Kit.started("/b"), .cacheMiss, .attemptSent(attempt: 1, headers: [:]),
                .responseReceived(attempt: 1, status: 200, bytes: 1, duration: .zero), .stored(bytes: stored[0]),
                .evicted(count: 1), .requestFinished(source: .network, status: 200, duration: .zero),
                Kit.started("/b", .delete), .attemptSent(attempt: 1, headers: [:]),
                .responseReceived(attempt: 1, status: 200, bytes: 1, duration: .zero), .invalidated(count: 1),
                .requestFinished(source: .network, status: 200, duration: .zero),
            ])
    }

    @Test func aCancelledCallReportsItsCancellation() async throws {
        let gate = CoalescerTestKit.Gate()
        let transport = MockTransport { _, _ in
            _ = await gate.wait()
            return .text(200)
        }
        let client = Kit.makeClient(transport)
        let events = client.events
        let call = Task { try await client.send(APIRequest<Data>.get("/slow")) }
        try #require(await CoalescerTestKit.eventually { transport.callCount == 1 })
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        let kinds = await Kit.collect(events, from: client.eventLog).map(\.kind)
        #expect(kinds.first == Kit.started("/slow"))
        #expect(kinds.last == .requestFailed(error: "cancelled", duration: .zero))
        #expect(client.metrics.cancellations == 1)
        #expect(client.metrics.failures == 0)
        await gate.open()
    }
}
