#if Observability && ServiceTests
    import Courier
    import CourierObservability
    import Foundation
    import HTTPTypes
    import Hummingbird
    import InMemoryLogging
    import Logging
    import MetricsTestKit
    import Synchronization
    import Testing
    import Tracing

    #if canImport(FoundationNetworking)
        import FoundationNetworking
    #endif

    /// A Hummingbird 2 service whose route calls an upstream (a second Hummingbird app) through Courier, observed by
    /// swift-log, swift-metrics and tracing, over real sockets on loopback.
    @Suite(.timeLimit(.minutes(2))) struct HummingbirdServiceTests {
        struct User: ResponseCodable, Equatable {
            let id: Int
            let name: String
        }

        @Test func fiftyRouteRequestsMakeOneUpstreamCallAndAreObserved() async throws {
            let upstreamGate = TestKit.Gate()
            let received = Mutex<[String?]>([])
            let upstreamRouter = Router()
            upstreamRouter.get("users/:id") { request, context -> User in
                received.withLock { $0.append(request.headers[HTTPField.Name("traceparent")!]) }
                await upstreamGate.wait()
                return User(id: try context.parameters.require("id", as: Int.self), name: "Ada")
            }

            try await Self.serving(upstreamRouter) { upstreamPort in
                let (logger, lines) = TestKit.logger()
                let metrics = TestMetrics()
                let tracer = W3CTracer()
                var configuration = APIClient.Configuration(cache: nil)
                configuration.observe(logger: logger, metrics: metrics, tracer: tracer)
                let upstream = APIClient(
                    baseURL: URL(string: "http://127.0.0.1:\(upstreamPort)")!, configuration: configuration)

                let router = Router()
                router.get("profiles/:id") { _, context -> User in
                    let id = try context.parameters.require("id", as: Int.self)
                    return try await tracer.withSpan("GET /profiles/:id", ofKind: .server) { _ in
                        try await upstream.send(APIRequest<User>.get("/users/\(id)")).value
                    }
                }
                try await Self.serving(router) { port in
                    let callers = Self.driver(port: port)
                    let calls = (0..<50).map { _ in
                        Task { try await callers.send(APIRequest<Data>.get("/profiles/42")).value }
                    }
                    #expect(await TestKit.waitForCallers(50, on: upstream), "every route joined the flight")
                    await upstreamGate.open()
                    for call in calls {
                        let user = try JSONDecoder().decode(User.self, from: try await call.value)
                        #expect(user == User(id: 42, name: "Ada"))
                    }

                    // One upstream call, carrying the context of the one attempt span.
                    let headers = received.withLock { $0 }
                    #expect(headers.count == 1)
                    let attempts = tracer.finishedSpans.filter { $0.kind == .client }
                    #expect(attempts.count == 1)
                    let attempt = try #require(attempts.first)
                    #expect(headers.first == W3CTracer.traceparent(trace: attempt.traceID, span: attempt.spanID))

                    // One span per call, each under its route's span; the leader's is the attempt's parent.
                    let routes = tracer.finishedSpans.filter { $0.kind == .server }
                    let callSpans = tracer.finishedSpans.filter { $0.kind == .internal }
                    #expect(routes.count == 50 && callSpans.count == 50)
                    let routeIDs = Set(routes.map(\.spanID))
                    #expect(callSpans.allSatisfy { routeIDs.contains($0.parentSpanID ?? "") })
                    #expect(Set(callSpans.map(\.traceID)).count == 50, "each route is its own trace")
                    #expect(callSpans.filter { $0.spanID == attempt.parentSpanID }.count == 1)
                    #expect(callSpans.filter { !$0.links.isEmpty }.count == 49)

                    // The logs carry every call id, and the metrics match the client's counters.
                    let finished = lines.entries.filter { $0.level == .info && "\($0.message)".hasPrefix("finished") }
                    #expect(Set(finished.compactMap { $0.metadata["courier.call_id"].map { "\($0)" } }).count == 50)
                    let ids = Set((1...50).map { "#\($0)" })
                    #expect(Set(lines.entries.compactMap { $0.metadata["courier.call_id"].map { "\($0)" } }) == ids)
                    #expect(upstream.metrics.upstreamCalls == 1 && upstream.metrics.joined == 49)
                    #expect(metrics.counterTotal(label: "courier_requests_total") == 50)
                    #expect(metrics.counterTotal(label: "courier_upstream_calls_total") == 1)
                    #expect(metrics.counterTotal(label: "courier_joined_total") == 49)
                    #expect(metrics.counterTotal(label: "courier_failures_total") == 0)
                }
            }
        }

        /// Runs a Hummingbird app on 127.0.0.1, on a port the system picks, for as long as `body` runs.
        static func serving(_ router: Router<BasicRequestContext>, _ body: (Int) async throws -> Void) async throws {
            let (ports, port) = AsyncStream.makeStream(of: Int.self)
            let app = Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { channel in
                    port.yield(channel.localAddress?.port ?? 0)
                    port.finish()
                },
                logger: Logger(label: "upstream") { _ in SwiftLogNoOpLogHandler() })
            let server = Task { try await app.run() }
            var iterator = ports.makeAsyncIterator()
            let result: Result<Void, any Error>
            do {
                let bound = try #require(await iterator.next())
                try await body(bound)
                result = .success(())
            } catch {
                result = .failure(error)
            }
            server.cancel()
            _ = await server.result
            try result.get()
        }

        /// A client that sends each of the test's requests to the service on its own (no coalescing, no cache), with
        /// enough connections for all of them at once.
        static func driver(port: Int) -> APIClient {
            let session = URLSessionConfiguration.ephemeral
            session.httpMaximumConnectionsPerHost = 64
            var configuration = APIClient.Configuration(
                transport: URLSessionTransport(configuration: session), cache: nil, retryPolicy: .never)
            configuration.isCoalescingEnabled = false
            return APIClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!, configuration: configuration)
        }
    }
#endif
