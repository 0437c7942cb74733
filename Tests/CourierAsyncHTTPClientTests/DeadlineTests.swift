#if AsyncHTTPClient
    import Courier
    import CourierAsyncHTTPClient
    import CourierTesting
    import Foundation
    import Testing

    /// Each attempt's deadline holds over AsyncHTTPClient, on the system clock and on an injected one: the deadline fails
    /// AsyncHTTPClient's task in flight (no task of Courier's per attempt), and the transfer stops.
    @Suite("AsyncHTTPClientTransport: deadlines", .timeLimit(.minutes(1)))
    struct DeadlineTests {
        /// `/stall` sends its head and 64 KiB of a 10 MB body, then nothing.
        private static func stalledRequest(timeout: Duration) -> APIRequest<Data> {
            var request = APIRequest<Data>.get("/stall")
            request.timeout = timeout
            return request
        }

        @Test func aBodyThatStallsFailsAtTheAttemptDeadlineAndStopsTheTransfer() async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                let client = APIClient(
                    baseURL: server.baseURL,
                    configuration: .init(transport: transport, cache: nil, retryPolicy: .never))
                let error = await #expect(throws: APIError.self) {
                    try await client.send(Self.stalledRequest(timeout: .seconds(1)))
                }
                guard case .timedOut(let limit)? = error else {
                    Issue.record("expected timedOut, got \(String(describing: error))")
                    return
                }
                #expect(limit == .seconds(1))
                // On a loaded machine the deadline can pass before the request reaches the server: then there is no
                // transfer to stop (and waiting for its end would wait forever: the log's wait ignores cancellation).
                if server.log.events.contains(.responding(path: "/stall")) {
                    #expect(
                        await server.log.first { $0 == .closedEarly(path: "/stall") } == .closedEarly(path: "/stall"))
                }
                try await transport.shutdown()
            }
        }

        @Test func calledDirectlyTheTransportEndsAStalledBodyAtItsDeadline() async throws {
            try await withTestServer { server in
                let clock = ManualClock()
                let transport = AsyncHTTPClientTransport()
                let deadline = TransportDeadline(timeout: .seconds(30), clock: clock)
                let call = Task {
                    try await transport.send(TransportRequest(url: server.url("/stall")), deadline: deadline)
                }
                await clock.waitForSleeper { $0 == .seconds(30) }
                #expect(await server.log.first { $0 == .responding(path: "/stall") } == .responding(path: "/stall"))
                clock.advance(by: .seconds(30))
                let error = await #expect(throws: APIError.self) { try await call.value }
                guard case .timedOut(.seconds(30))? = error else {
                    Issue.record("expected timedOut(30 s), got \(String(describing: error))")
                    return
                }
                #expect(await server.log.first { $0 == .closedEarly(path: "/stall") } == .closedEarly(path: "/stall"))
                try await transport.shutdown()
            }
        }

        @Test func onAnInjectedClockTheAttemptEndsWhenThatClockSaysSo() async throws {
            try await withTestServer { server in
                let clock = ManualClock()
                let transport = AsyncHTTPClientTransport()
                let client = APIClient(
                    baseURL: server.baseURL,
                    configuration: .init(transport: transport, cache: nil, retryPolicy: .never, clock: clock))
                let call = Task { try await client.send(Self.stalledRequest(timeout: .seconds(30))) }
                // The deadline scheduler's timer sleeps for the attempt's 30 s on the manual clock.
                await clock.waitForSleeper { $0 == .seconds(30) }
                #expect(await server.log.first { $0 == .responding(path: "/stall") } == .responding(path: "/stall"))
                clock.advance(by: .seconds(30))
                let error = await #expect(throws: APIError.self) { try await call.value }
                guard case .timedOut(.seconds(30))? = error else {
                    Issue.record("expected timedOut(30 s), got \(String(describing: error))")
                    return
                }
                #expect(await server.log.first { $0 == .closedEarly(path: "/stall") } == .closedEarly(path: "/stall"))
                try await transport.shutdown()
            }
        }

        @Test func aRequestWithinItsDeadlineIsUnaffected() async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                let client = APIClient(
                    baseURL: server.baseURL, configuration: .init(transport: transport, cache: nil, retryPolicy: .never)
                )
                var request = APIRequest<Data>.get("/json")
                request.timeout = .seconds(30)
                let response = try await client.send(request)
                #expect(response.statusCode == 200 && !response.value.isEmpty)
                try await transport.shutdown()
            }
        }
    }
#endif
