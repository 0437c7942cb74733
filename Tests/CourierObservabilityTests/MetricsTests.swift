#if Observability
    import Courier
    import CourierObservability
    import Foundation
    import MetricsTestKit
    import Synchronization
    import Testing

    /// The counters mirror `client.metrics`, with dimensions a dashboard groups by, through a factory passed in (the
    /// global metrics system is never bootstrapped, so these tests run in parallel with everything else).
    @Suite(.timeLimit(.minutes(1))) struct MetricsTests {
        /// A run through every counter: fresh and stale hits, misses, a 304, a retry, joined callers, failures and a
        /// cancellation. Each metric's total equals the client's own counter.
        @Test func countersMatchTheClientsMetrics() async throws {
            let metrics = TestMetrics()
            let gate = TestKit.Gate()
            let flakyAttempts = Mutex(0)
            let transport = TestKit.StubTransport { request, _ in
                switch request.url.path {
                case "/v1/fresh": return TestKit.response(200, "f", headers: ["Cache-Control": "max-age=600"])
                case "/v1/etag":
                    if request.headers["If-None-Match"] == "\"v1\"" {
                        return TestKit.response(304, headers: ["ETag": "\"v1\""])
                    }
                    return TestKit.response(200, "e", headers: ["ETag": "\"v1\"", "Cache-Control": "no-cache"])
                case "/v1/flaky":
                    let attempt = flakyAttempts.withLock { count in
                        count += 1
                        return count
                    }
                    return TestKit.response(attempt == 1 ? 503 : 200)
                case "/v1/shared":
                    await gate.wait()
                    return TestKit.response(200, "s")
                case "/v1/slow":
                    await gate.wait()
                    return TestKit.response(200)
                default: return TestKit.response(404)
                }
            }
            let client = TestKit.makeClient(
                transport, cache: ResponseCache(), retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: .zero)
            ) { $0.observe(metrics: metrics) }
            for _ in 0..<3 { _ = try await client.send(APIRequest<Data>.get("/fresh")) }
            for _ in 0..<2 { _ = try await client.send(APIRequest<Data>.get("/etag")) }
            _ = try await client.send(APIRequest<Data>.get("/flaky"))
            _ = try? await client.send(APIRequest<Data>.post("/missing", body: ["a": 1]))
            let shared = (0..<10).map { _ in Task { try await client.send(APIRequest<Data>.get("/shared")) } }
            let slow = Task {
                try await client.send(APIRequest<Data>(path: "/slow", cachePolicy: .reloadIgnoringCache))
            }
            #expect(await TestKit.waitForCallers(11, on: client))
            slow.cancel()
            await gate.open()
            for call in shared { _ = try await call.value }
            _ = try? await slow.value

            let expected = client.metrics
            #expect(expected.joined == 9 && expected.cacheRevalidations == 1 && expected.retries == 1)
            #expect(expected.failures == 1 && expected.cancellations == 1 && expected.cacheHits == 2)
            let totals: [(String, Int)] = [
                ("courier_requests_total", expected.requests),
                ("courier_upstream_calls_total", expected.upstreamCalls),
                ("courier_joined_total", expected.joined),
                ("courier_cache_hits_total", expected.cacheHits),
                ("courier_cache_misses_total", expected.cacheMisses),
                ("courier_cache_revalidations_total", expected.cacheRevalidations),
                ("courier_retries_total", expected.retries),
                ("courier_token_refreshes_total", expected.tokenRefreshes),
                ("courier_failures_total", expected.failures),
                ("courier_cancellations_total", expected.cancellations),
            ]
            for (label, count) in totals {
                #expect(metrics.counterTotal(label: label) == Int64(count), "\(label)")
            }
            #expect(
                metrics.timers(label: "courier_call_duration").reduce(0) { $0 + $1.values.count } == expected.requests)
        }

        @Test func dimensionsSayMethodStatusClassAndSource() async throws {
            let metrics = TestMetrics()
            let transport = TestKit.StubTransport { request, _ in
                request.method == .delete
                    ? TestKit.response(500) : TestKit.response(200, headers: ["Cache-Control": "max-age=60"])
            }
            let client = TestKit.makeClient(transport, cache: ResponseCache()) { $0.observe(metrics: metrics) }
            _ = try await client.send(APIRequest<Data>.get("/a"))
            _ = try await client.send(APIRequest<Data>.get("/a"))
            _ = try? await client.send(APIRequest<Void>.delete("/a"))

            let network = try metrics.expectCounter(
                "courier_requests_total", [("method", "GET"), ("status_class", "2xx"), ("source", "network")])
            let cached = try metrics.expectCounter(
                "courier_requests_total", [("method", "GET"), ("status_class", "2xx"), ("source", "cache")])
            let failed = try metrics.expectCounter(
                "courier_requests_total", [("method", "DELETE"), ("status_class", "failed"), ("source", "none")])
            #expect([network.totalValue, cached.totalValue, failed.totalValue] == [1, 1, 1])
            let attempts = try metrics.expectTimer(
                "courier_attempt_duration", [("method", "DELETE"), ("status_class", "5xx")])
            #expect(attempts.values.count == 1)
            #expect(try metrics.expectCounter("courier_upstream_calls_total", [("method", "GET")]).totalValue == 1)
        }

        /// Budget denials, breaker moves and rejections, hedges and shed calls are counted as the client counts them.
        @Test func resilienceCountersMatchTheClientsMetrics() async throws {
            let metrics = TestMetrics()
            let transport = TestKit.StubTransport { _, _ in TestKit.response(503) }
            let client = TestKit.makeClient(transport, retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: .zero)) {
                $0.resilience = Resilience(
                    retryBudget: .init(window: .seconds(10), ratio: 0, minimumPerSecond: 0),
                    circuitBreaker: .init(minimumThroughput: 4, breakDuration: .seconds(3_600)))
                $0.observe(metrics: metrics)
            }
            for index in 0..<6 { _ = try? await client.send(APIRequest<Data>.get("/down/\(index)")) }
            let expected = client.metrics
            #expect(expected.retryBudgetDenials == 4 && expected.circuitStateChanges == 1)
            #expect(expected.circuitRejections == 2 && expected.upstreamCalls == 4)
            let totals: [(String, Int)] = [
                ("courier_retry_budget_denials_total", expected.retryBudgetDenials),
                ("courier_circuit_state_changes_total", expected.circuitStateChanges),
                ("courier_circuit_rejections_total", expected.circuitRejections),
            ]
            for (label, count) in totals {
                #expect(metrics.counterTotal(label: label) == Int64(count), "\(label)")
            }
            let opened = try metrics.expectCounter(
                "courier_circuit_state_changes_total", [("method", "GET"), ("state", "open")])
            #expect(opened.totalValue == 1)
        }
    }
#endif
