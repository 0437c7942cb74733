#if OpenAPI && ServiceTests
    import CourierOpenAPI
    import Foundation
    import OpenAPIRuntime
    import Testing

    @testable import Courier

    /// The generated Notes client sending through an `APIClient`, against a Hummingbird upstream on a real socket.
    @Suite(.timeLimit(.minutes(2))) struct GeneratedClientTests {
        /// A generated client over a Courier client whose base URL is the server's, so credentials go to it.
        private func makeClients(_ url: URL, authenticator: TokenRefresher? = nil) -> (APIClient, Client) {
            var configuration = APIClient.Configuration(retryPolicy: .never)
            configuration.authenticator = authenticator
            let api = APIClient(baseURL: url, configuration: configuration)
            return (api, Client(serverURL: url, transport: APIClientTransport(client: api)))
        }

        @Test func aHundredConcurrentIdenticalCallsMakeOneUpstreamCall() async throws {
            let gate = Gate()
            try await NotesServer(gate: gate).run { url, upstream in
                let (api, notes) = makeClients(url)
                let calls = (0..<100).map { _ in Task { try await notes.getNote(path: .init(noteID: 1)) } }
                // Every caller is inside the client's one flight before the upstream answers.
                var waiting = 0
                for _ in 0..<200_000 where waiting < 100 {
                    waiting = await api.coalescer.waiterCount
                    await Task.yield()
                }
                try #require(waiting == 100)
                await gate.open()
                for call in calls {
                    let note = try await call.value.ok.body.json
                    #expect(note == Components.Schemas.Note(id: 1, text: "first"))
                }
                #expect(await upstream.count(of: "/notes/1") == 1)
                #expect(api.metrics.upstreamCalls == 1)
                #expect(api.metrics.joined == 99)
            }
        }

        @Test func aDocumentedNotFoundArrivesAsItsCase() async throws {
            try await NotesServer().run { url, upstream in
                let (api, notes) = makeClients(url)
                let output = try await notes.getNote(path: .init(noteID: 7))
                guard case .notFound(let notFound) = output else {
                    Issue.record("expected .notFound, got \(output)")
                    return
                }
                #expect(try notFound.body.json.title == "no such note")
                #expect(await upstream.count(of: "/notes/7") == 1)
                #expect(api.metrics.failures == 0)
            }
        }

        @Test func aPostSendsItsJSONBodyAndReadsTheCreatedNote() async throws {
            try await NotesServer().run { url, upstream in
                let (_, notes) = makeClients(url)
                let output = try await notes.createNote(body: .json(.init(text: "buy milk")))
                #expect(try output.created.body.json == Components.Schemas.Note(id: 2, text: "buy milk"))
                let sent = try #require(await upstream.entries.first)
                #expect(sent.method == "POST")
                #expect(sent.contentType?.hasPrefix("application/json") == true)
                #expect(sent.body.map { $0.contains(#""text""#) && $0.contains("buy milk") } == true)
            }
        }

        @Test func anUnauthorizedCallRefreshesOnceAndTheResendSucceeds() async throws {
            try await NotesServer(acceptedToken: "fresh").run { url, upstream in
                let refreshes = RefreshCounter()
                let refresher = TokenRefresher(credential: Credential(accessToken: "stale", identity: "ada")) { _ in
                    await refreshes.increment()
                    return Credential(accessToken: "fresh", identity: "ada")
                }
                let (api, notes) = makeClients(url, authenticator: refresher)
                let profile = try await notes.getProfile().ok.body.json
                #expect(profile.name == "Ada")
                #expect(await refreshes.count == 1)
                #expect(await upstream.entries.map(\.authorization) == ["Bearer stale", "Bearer fresh"])
                #expect(api.metrics.tokenRefreshes == 1)
            }
        }

        @Test func aRefusedRefreshedTokenArrivesAsTheDocumentedUnauthorized() async throws {
            try await NotesServer(acceptedToken: "never-issued").run { url, upstream in
                let refreshes = RefreshCounter()
                let refresher = TokenRefresher(credential: Credential(accessToken: "stale", identity: "ada")) { _ in
                    await refreshes.increment()
                    return Credential(accessToken: "fresh", identity: "ada")
                }
                let (_, notes) = makeClients(url, authenticator: refresher)
                let output = try await notes.getProfile()
                guard case .unauthorized = output else {
                    Issue.record("expected .unauthorized, got \(output)")
                    return
                }
                #expect(await refreshes.count == 1)
                #expect(await upstream.count(of: "/me") == 2)
            }
        }

        @Test func aFailureWithoutAResponseIsThrownAsTheClientsError() async throws {
            // A port nothing listens on: the server is started, its port read, and the server stopped.
            let url = try await NotesServer().run { url, _ in url }
            let (_, notes) = makeClients(url)
            let error = try await #require(throws: ClientError.self) { try await notes.getNote(path: .init(noteID: 1)) }
            #expect(error.underlyingError is APIError)
        }
    }

    /// Counts refreshes of a test's `TokenRefresher`.
    actor RefreshCounter {
        private(set) var count = 0

        func increment() {
            count += 1
        }
    }
#endif
