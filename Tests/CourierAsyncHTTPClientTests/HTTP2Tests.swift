#if AsyncHTTPClient
    import AsyncHTTPClient
    import Courier
    import CourierAsyncHTTPClient
    import Foundation
    import NIOSSL
    import Testing

    /// HTTP/2 over TLS against nginx, with a self-signed certificate trusted through the transport's TLS configuration.
    @Suite("AsyncHTTPClientTransport: HTTP/2 over TLS", .enabled(if: Nginx.isAvailable), .serialized)
    struct HTTP2Tests {
        struct Item: Decodable, Sendable, Equatable {
            let id: Int
            let name: String
        }

        @Test func http2OverTLSWithATrustedSelfSignedCertificate() async throws {
            let nginx = try Nginx.startHTTP2()
            defer { nginx.stop() }
            var configuration = AsyncHTTPClientTransport.defaultConfiguration
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(nginx.certificatePath))
            configuration.tlsConfiguration = tls
            let transport = AsyncHTTPClientTransport(configuration: configuration)
            let client = APIClient(baseURL: nginx.baseURL, configuration: .init(transport: transport))
            let responses = try await withThrowingTaskGroup(of: APIResponse<Item>.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        try await client.send(
                            APIRequest<Item>.get("/json", query: [.init(name: "n", value: "\(index)")]))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(responses.count == 8)
            #expect(responses.allSatisfy { $0.value == Item(id: 7, name: "courier") })
            #expect(responses.allSatisfy { $0.headers["X-Protocol"] == "HTTP/2.0" })
            try await transport.shutdown()
        }

        @Test func anUntrustedCertificateIsASecureConnectionFailure() async throws {
            let nginx = try Nginx.startHTTP2()
            defer { nginx.stop() }
            let transport = AsyncHTTPClientTransport()
            let error = await #expect(throws: APIError.self) {
                try await transport.send(TransportRequest(url: nginx.baseURL.appendingPathComponent("json")))
            }
            guard case .transport(let failure, _)? = error else {
                Issue.record("expected a transport failure, got \(String(describing: error))")
                return
            }
            #expect(failure == .secureConnectionFailed)
            try await transport.shutdown()
        }
    }
#endif
