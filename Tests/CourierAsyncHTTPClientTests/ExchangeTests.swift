#if AsyncHTTPClient
    import AsyncHTTPClient
    import Courier
    import CourierAsyncHTTPClient
    import Foundation
    import Testing

    /// Whole exchanges over real sockets: what a service sees through ``APIClient`` and through the transport itself.
    @Suite("AsyncHTTPClientTransport: exchanges")
    struct ExchangeTests {
        struct Item: Decodable, Sendable, Equatable {
            let id: Int
            let name: String
        }

        @Test func jsonGetThroughAnAPIClient() async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                let client = APIClient(baseURL: server.baseURL, configuration: .init(transport: transport))
                let response = try await client.send(APIRequest<Item>.get("/json"))
                #expect(response.value == Item(id: 7, name: "courier"))
                #expect(response.statusCode == 200)
                #expect(server.log.requests.map(\.path) == ["/json"])
                try await transport.shutdown()
            }
        }

        @Test func anInjectedClientStaysTheCallersToShutDown() async throws {
            try await withTestServer { server in
                let client = HTTPClient(
                    eventLoopGroup: HTTPClient.defaultEventLoopGroup,
                    configuration: AsyncHTTPClientTransport.defaultConfiguration)
                let transport = AsyncHTTPClientTransport(client: client)
                try await transport.shutdown()
                let response = try await transport.send(TransportRequest(url: server.url("/json")))
                #expect(String(decoding: response.body, as: UTF8.self) == RouteHandler.json)
                try await client.shutdown()
            }
        }

        /// AsyncHTTPClient traps (in debug builds) when a client that was not shut down is released: the transport
        /// shuts its own client down when it goes away.
        @Test func releasingATransportWithoutShutdownShutsItsClientDown() async throws {
            try await withTestServer { server in
                var transport: AsyncHTTPClientTransport? = AsyncHTTPClientTransport()
                let response = try await transport?.send(TransportRequest(url: server.url("/json")))
                #expect(response?.statusCode == 200)
                weak let released = transport
                transport = nil
                #expect(released == nil)
            }
        }

        @Test func chunkedResponseArrivesWhole() async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                let response = try await transport.send(TransportRequest(url: server.url("/chunked")))
                #expect(String(decoding: response.body, as: UTF8.self) == "alpha-beta-gamma")
                #expect(response.headers["Transfer-Encoding"]?.lowercased() == "chunked")
                try await transport.shutdown()
            }
        }

        @Test func unknownContentEncodingArrivesIntact() async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                let request = TransportRequest(url: server.url("/encoded"), headers: ["Accept-Encoding": "gzip"])
                let response = try await transport.send(request)
                #expect(response.statusCode == 200)
                #expect(response.headers["Content-Encoding"] == "unknown-coding")
                #expect(Array(response.body) == RouteHandler.encodedBody)
                try await transport.shutdown()
            }
        }

        @Test(arguments: [true, false])
        func streamedUploadWithItsLength(knownLength: Bool) async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                let size = 1 << 20 + 17
                var request = TransportRequest(method: .post, url: server.url("/upload"))
                request.streamedBody = StreamedBody(length: knownLength ? size : nil) {
                    ByteStream(PatternChunks(size: size, chunkSize: 64 << 10))
                }
                let response = try await transport.send(request)
                let body = String(decoding: response.body, as: UTF8.self)
                #expect(body.contains(#""bytes":\#(size)"#))
                #expect(body.contains(#""intact":true"#))
                #expect(body.contains(knownLength ? #""length":"\#(size)""# : #""length":"""#))
                #expect(body.contains(#""chunked":\#(!knownLength)"#))
                try await transport.shutdown()
            }
        }

        @Test func bufferedBodyIsSentWithItsLength() async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                let body = Data((0..<1000).map(RouteHandler.uploadPattern))
                let request = TransportRequest(
                    method: .put, url: server.url("/upload"), headers: ["Content-Length": "999999"], body: body)
                let response = try await transport.send(request)
                let text = String(decoding: response.body, as: UTF8.self)
                #expect(text.contains(#""bytes":1000,"intact":true,"length":"1000""#))
                try await transport.shutdown()
            }
        }

        @Test func unauthorizedThenRefreshedTokenThroughAnAPIClient() async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                let refresher = TokenRefresher(credential: Credential(accessToken: "stale", identity: "user-1")) { _ in
                    Credential(accessToken: "fresh", identity: "user-1")
                }
                let client = APIClient(
                    baseURL: server.baseURL, configuration: .init(transport: transport, authenticator: refresher))
                let response = try await client.send(APIRequest<Item>.get("/gated"))
                #expect(response.value == Item(id: 7, name: "courier"))
                #expect(await refresher.refreshCount == 1)
                #expect(server.log.requests.map { $0.headers["authorization"] } == ["Bearer stale", "Bearer fresh"])
                try await transport.shutdown()
            }
        }
    }

    /// `size` bytes of ``RouteHandler/uploadPattern(_:)`` in chunks, made as they are asked for.
    struct PatternChunks: AsyncSequence, Sendable {
        typealias Element = Data
        let size: Int
        let chunkSize: Int

        func makeAsyncIterator() -> Iterator { Iterator(size: size, chunkSize: chunkSize) }

        struct Iterator: AsyncIteratorProtocol {
            let size: Int
            let chunkSize: Int
            var offset = 0

            mutating func next() async throws -> Data? {
                guard offset < size else { return nil }
                let end = Swift.min(size, offset + chunkSize)
                defer { offset = end }
                return Data((offset..<end).map(RouteHandler.uploadPattern))
            }
        }
    }
#endif
