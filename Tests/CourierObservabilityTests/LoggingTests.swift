#if Observability
    import Courier
    import CourierObservability
    import Foundation
    import InMemoryLogging
    import Logging
    import Testing

    /// One structured line per step, at a level that says how much it matters, and never a secret.
    @Suite(.timeLimit(.minutes(1))) struct LoggingTests {
        @Test func everyStepIsOneLineWithTheCallsFacts() async throws {
            let (logger, lines) = TestKit.logger()
            let transport = TestKit.StubTransport { _, index in TestKit.response(index == 0 ? 503 : 200, "ok") }
            let client = TestKit.makeClient(transport, retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: .zero)) {
                $0.observe(logger: logger)
            }
            let events = client.events
            _ = try await client.send(APIRequest<Data>.get("/users/42"))

            var kinds: [ClientEvent.Kind] = []
            for await event in events {
                kinds.append(event.kind)
                if case .requestFinished = event.kind { break }
            }
            let entries = lines.entries
            #expect(entries.map { "\($0.message)" } == kinds.map { "\($0)" }, "one line per event, in order")
            #expect(entries.map(\.level) == [.debug, .debug, .debug, .notice, .debug, .debug, .info])
            #expect(entries.allSatisfy { $0.metadata["courier.call_id"] == "#1" })
            #expect(entries.allSatisfy { $0.metadata["courier.method"] == "GET" })
            #expect(entries.allSatisfy { $0.metadata["courier.url"] == "https://api.example.com/v1/users/42" })
            let finished = try #require(entries.last)
            #expect(finished.metadata["courier.status"] == "200")
            #expect(finished.metadata["courier.source"] == "network")
            #expect(finished.metadata["courier.joined"] == "false")
            #expect(finished.metadata["courier.duration_ms"] != nil)
            #expect(
                entries.filter { $0.metadata["courier.attempt"] != nil }.map { $0.metadata["courier.attempt"] } == [
                    "1", "1", "1", "2", "2",
                ])
            #expect(entries[3].metadata["courier.reason"] == "status 503")
        }

        @Test func aFailedCallIsAnErrorAndACancelledOneIsNot() async throws {
            let (logger, lines) = TestKit.logger()
            let gate = TestKit.Gate()
            let transport = TestKit.StubTransport { request, _ in
                if request.url.path.hasSuffix("/slow") { await gate.wait() }
                return TestKit.response(request.url.path.hasSuffix("/missing") ? 404 : 200)
            }
            let client = TestKit.makeClient(transport) { $0.observe(logger: logger) }
            await #expect(throws: APIError.self) { try await client.send(APIRequest<Data>.get("/missing")) }
            let failed = try #require(lines.entries.last)
            #expect(failed.level == .error)
            #expect(failed.metadata["courier.error"] == "The server answered with status 404 (0 bytes).")

            let slow = Task { try await client.send(APIRequest<Data>.get("/slow")) }
            #expect(await TestKit.eventually { transport.requests.count == 2 })
            slow.cancel()
            await #expect(throws: CancellationError.self) { try await slow.value }
            await gate.open()
            let cancelled = try #require(lines.entries.last)
            #expect(cancelled.level == .info)
            #expect(cancelled.metadata["courier.error"] == "cancelled")
        }

        @Test func aLoggerAboveDebugGetsOnlyTheEnds() async throws {
            var (logger, lines) = TestKit.logger()
            logger.logLevel = .info
            let client = TestKit.makeClient(TestKit.StubTransport { _, _ in TestKit.response(200) }) {
                $0.observe(logger: logger)
            }
            _ = try await client.send(APIRequest<Data>.get("/a"))
            #expect(lines.entries.map(\.level) == [.info])
        }

        @Test func noSecretIsLogged() async throws {
            let (logger, lines) = TestKit.logger()
            let transport = TestKit.StubTransport { request, _ in
                if request.url.path.hasSuffix("/down") { throw URLError(.cannotConnectToHost) }
                return TestKit.response(200, headers: ["Set-Cookie": "session=secret-session"])
            }
            let client = TestKit.makeClient(transport) { configuration in
                configuration.observe(logger: logger)
                configuration.headers = [
                    "Authorization": "Bearer secret-token", "Cookie": "id=secret-cookie", "X-Api-Key": "secret-key",
                ]
                configuration.credentials.headerNames.insert("X-Api-Key")
            }
            let query = [URLQueryItem(name: "api_key", value: "secret-query")]
            _ = try await client.send(APIRequest<Data>.get("/users", query: query))
            _ = try? await client.send(APIRequest<Data>.get("/down", query: query))
            _ = try? await client.send(APIRequest<Data>.get("https://bob:secret-password@api.example.com/x"))

            #expect(transport.requests.first?.headers["Authorization"] == "Bearer secret-token", "the secret was sent")
            #expect(lines.entries.count > 10)
            for entry in lines.entries {
                let text = "\(entry.message) \(entry.metadata)"
                #expect(!text.contains("secret"), "\(text)")
            }
            #expect(lines.entries.contains { $0.metadata["courier.url"]?.description.contains("<redacted>") == true })
        }
    }
#endif
