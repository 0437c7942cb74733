#if AsyncHTTPClient
    import Courier
    import CourierAsyncHTTPClient
    import Foundation
    import Testing

    /// Redirects are followed by the transport, with Courier's rules: credentials stay with their origin.
    @Suite("AsyncHTTPClientTransport: redirects")
    struct RedirectTests {
        static let credentialFields: HeaderFields = [
            "Authorization": "Bearer secret-token", "X-API-Key": "key-1", "X-Tenant-Secret": "tenant-1",
            "Accept": "application/json",
        ]

        static func policy() -> CredentialPolicy {
            var policy = CredentialPolicy.standard
            policy.headerNames.insert("x-tenant-secret")
            return policy
        }

        static func redirect(from server: TestServer, to target: URL, status: Int = 302) -> URL {
            var components = URLComponents(url: server.url("/redirect"), resolvingAgainstBaseURL: false)!
            components.queryItems = [
                URLQueryItem(name: "status", value: "\(status)"), .init(name: "to", value: target.absoluteString),
            ]
            return components.url!
        }

        @Test(arguments: BufferedSend.allCases)
        func crossOriginRedirectDropsEveryCredentialField(way: BufferedSend) async throws {
            try await withTestServer { first in
                try await withTestServer { second in
                    let transport = AsyncHTTPClientTransport()
                    let request = TransportRequest(
                        url: Self.redirect(from: first, to: second.url("/headers")), headers: Self.credentialFields,
                        credentials: Self.policy())
                    let response = try await way.send(request, with: transport)
                    #expect(response.statusCode == 200)
                    let received = try #require(second.log.requests.first).headers
                    #expect(received["authorization"] == nil)
                    #expect(received["x-api-key"] == nil)
                    #expect(received["x-tenant-secret"] == nil)
                    #expect(received["accept"] == "application/json")
                    #expect(first.log.requests.first?.headers["authorization"] == "Bearer secret-token")
                    try await transport.shutdown()
                }
            }
        }

        @Test func sameOriginRedirectKeepsCredentials() async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                let request = TransportRequest(
                    url: Self.redirect(from: server, to: server.url("/headers")), headers: Self.credentialFields,
                    credentials: Self.policy())
                _ = try await transport.send(request)
                let received = try #require(server.log.requests.last).headers
                #expect(received["authorization"] == "Bearer secret-token")
                #expect(received["x-tenant-secret"] == "tenant-1")
                try await transport.shutdown()
            }
        }

        @Test func seeOtherTurnsAPostIntoAGetWithoutItsBody() async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                let request = TransportRequest(
                    method: .post, url: Self.redirect(from: server, to: server.url("/upload"), status: 303),
                    headers: ["Content-Type": "application/octet-stream"], body: Data([0, 1, 2]))
                _ = try await transport.send(request)
                let last = try #require(server.log.requests.last)
                #expect(last.method == "GET")
                #expect(last.bodyBytes == 0)
                #expect(last.headers["content-type"] == nil)
                try await transport.shutdown()
            }
        }

        @Test(arguments: [307, 308])
        func temporaryAndPermanentRedirectsKeepMethodAndBody(status: Int) async throws {
            try await withTestServer { first in
                try await withTestServer { second in
                    let transport = AsyncHTTPClientTransport()
                    var request = TransportRequest(
                        method: .post, url: Self.redirect(from: first, to: second.url("/upload"), status: status),
                        headers: ["Authorization": "Bearer secret-token"])
                    request.streamedBody = StreamedBody(length: 5000) {
                        ByteStream(PatternChunks(size: 5000, chunkSize: 1000))
                    }
                    let response = try await transport.send(request)
                    #expect(String(decoding: response.body, as: UTF8.self).contains(#""bytes":5000,"intact":true"#))
                    let last = try #require(second.log.requests.last)
                    #expect(last.method == "POST")
                    #expect(last.headers["authorization"] == nil)
                    try await transport.shutdown()
                }
            }
        }

        @Test func aOneShotBodyIsNotSentTwice() async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                var request = TransportRequest(
                    method: .post, url: Self.redirect(from: server, to: server.url("/upload"), status: 307))
                request.streamedBody = StreamedBody(
                    length: 100, chunks: ByteStream(PatternChunks(size: 100, chunkSize: 50)))
                let error = await #expect(throws: APIError.self) { try await transport.send(request) }
                guard case .invalidRequest(.bodyNotReplayable)? = error else {
                    Issue.record("expected bodyNotReplayable, got \(String(describing: error))")
                    return
                }
                #expect(server.log.requests.map(\.path) == ["/redirect"])
                try await transport.shutdown()
            }
        }

        @Test func aRedirectLoopEndsWithAClearError() async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                let loop = server.url("/redirect?loop=1")
                let error = await #expect(throws: APIError.self) {
                    try await transport.send(TransportRequest(url: loop))
                }
                guard case .transport(.other, _)? = error else {
                    Issue.record("expected a transport failure, got \(String(describing: error))")
                    return
                }
                #expect(server.log.requests.count == AsyncHTTPClientTransport.maxRedirects + 1)
                try await transport.shutdown()
            }
        }
    }
#endif
