#if Observability
    import Courier
    import CourierObservability
    import Foundation
    import InMemoryTracing
    import Testing
    import Tracing

    /// A span per call under the caller's context, a child span per attempt whose context the server receives, the
    /// OpenTelemetry HTTP client attributes, error status on failure, and links from joiners to their leader.
    @Suite(.timeLimit(.minutes(1))) struct TracingTests {
        @Test func aCallIsASpanUnderTheCallersContextWithAChildPerAttempt() async throws {
            let tracer = W3CTracer()
            let transport = TestKit.StubTransport { _, index in TestKit.response(index == 0 ? 503 : 200, "ok") }
            let client = TestKit.makeClient(transport, retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: .zero)) {
                $0.observe(tracer: tracer)
            }
            let route = tracer.startSpan("GET /route", context: .topLevel, ofKind: .server)
            _ = try await ServiceContext.withValue(route.context) {
                try await client.send(APIRequest<Data>.get("https://api.example.com:8443/v1/users/42?page=2"))
            }
            route.end()

            let spans = tracer.finishedSpans
            let routeSpan = try #require(spans.first { $0.operationName == "GET /route" })
            let call = try #require(spans.first { $0.kind == .internal })
            let attempts = spans.filter { $0.kind == .client }
            #expect(spans.count == 4)
            #expect(call.operationName == "GET")
            #expect(call.parentSpanID == routeSpan.spanID && call.traceID == routeSpan.traceID)
            #expect(attempts.count == 2)
            #expect(attempts.allSatisfy { $0.parentSpanID == call.spanID && $0.traceID == call.traceID })
            for span in [call] + attempts {
                #expect(span.attributes["http.request.method"]?.toSpanAttribute() == "GET")
                #expect(
                    span.attributes["url.full"]?.toSpanAttribute() == "https://api.example.com:8443/v1/users/42?page=2")
                #expect(span.attributes["server.address"]?.toSpanAttribute() == "api.example.com")
                #expect(span.attributes["server.port"]?.toSpanAttribute() == 8443)
            }
            #expect(attempts.map { $0.attributes["http.response.status_code"]?.toSpanAttribute() } == [503, 200])
            #expect(attempts.map { $0.attributes["http.request.resend_count"]?.toSpanAttribute() } == [nil, 1])
            #expect(attempts.map { $0.attributes["error.type"]?.toSpanAttribute() } == ["503", nil])
            #expect(attempts.map { $0.status?.code } == [.error, nil])
            #expect(call.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
            #expect(call.attributes["courier.source"]?.toSpanAttribute() == "network")
            #expect(call.status == nil)
            // Each attempt carried its own span's context to the server.
            #expect(
                transport.requests.map { $0.headers["traceparent"] }
                    == attempts.map { W3CTracer.traceparent(trace: $0.traceID, span: $0.spanID) })
        }

        @Test func aFailedCallHasAnErrorStatusAndType() async throws {
            let tracer = W3CTracer()
            let transport = TestKit.StubTransport { _, _ in throw URLError(.cannotConnectToHost) }
            let client = TestKit.makeClient(transport) { $0.observe(tracer: tracer) }
            await #expect(throws: APIError.self) { try await client.send(APIRequest<Data>.get("/down?api_key=secret")) }

            let call = try #require(tracer.finishedSpans.first { $0.kind == .internal })
            let attempt = try #require(tracer.finishedSpans.first { $0.kind == .client })
            for span in [call, attempt] {
                #expect(span.status?.code == .error)
                #expect(span.attributes["error.type"]?.toSpanAttribute() == "transport")
                #expect(
                    span.attributes["url.full"]?.toSpanAttribute()
                        == "https://api.example.com/v1/down?api_key=<redacted>")
                let message = span.status?.message ?? ""
                #expect(!message.contains("secret"), "\(message)")
            }
            #expect(tracer.memory.activeSpans.isEmpty, "every span ended")
        }

        @Test func aJoinedCallsSpanLinksToTheLeadersSpan() async throws {
            let tracer = W3CTracer()
            let gate = TestKit.Gate()
            let transport = TestKit.StubTransport { _, _ in
                await gate.wait()
                return TestKit.response(200, "shared")
            }
            let client = TestKit.makeClient(transport) { $0.observe(tracer: tracer) }
            let calls = (0..<5).map { _ in Task { try await client.send(APIRequest<Data>.get("/shared")) } }
            #expect(await TestKit.waitForCallers(5, on: client))
            await gate.open()
            var responses: [APIResponse<Data>] = []
            for call in calls { responses.append(try await call.value) }

            #expect(transport.requests.count == 1)
            let callSpans = tracer.finishedSpans.filter { $0.kind == .internal }
            let attempt = try #require(tracer.finishedSpans.first { $0.kind == .client })
            let leader = try #require(callSpans.first { $0.spanID == attempt.parentSpanID })
            let joiners = callSpans.filter { $0.spanID != leader.spanID }
            #expect(callSpans.count == 5 && joiners.count == 4)
            #expect(leader.attributes["courier.joined"]?.toSpanAttribute() == false)
            for joiner in joiners {
                #expect(joiner.attributes["courier.joined"]?.toSpanAttribute() == true)
                #expect(joiner.links.map { $0.context.inMemorySpanContext?.spanID } == [leader.spanID])
            }
            #expect(tracer.memory.activeSpans.isEmpty)
        }

        @Test func aCacheHitIsOneSpanWithoutAttempts() async throws {
            let tracer = W3CTracer()
            let transport = TestKit.StubTransport { _, _ in
                TestKit.response(200, headers: ["Cache-Control": "max-age=60"])
            }
            let client = TestKit.makeClient(transport, cache: ResponseCache()) { $0.observe(tracer: tracer) }
            _ = try await client.send(APIRequest<Data>.get("/a"))
            tracer.memory.clearFinishedSpans()
            _ = try await client.send(APIRequest<Data>.get("/a"))
            let spans = tracer.finishedSpans
            #expect(spans.count == 1)
            #expect(spans.first?.attributes["courier.source"]?.toSpanAttribute() == "cache")
        }
    }
#endif
