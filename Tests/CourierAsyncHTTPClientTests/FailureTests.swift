#if AsyncHTTPClient
    import Courier
    import CourierAsyncHTTPClient
    import Foundation
    import Testing

    #if canImport(Glibc)
        import Glibc
    #endif

    /// Failures become clear ``APIError``s, as with ``URLSessionTransport``.
    @Suite("AsyncHTTPClientTransport: failures")
    struct FailureTests {
        @Test func aRefusedConnectionCannotConnect() async throws {
            let port = try HeldPort()
            defer { port.release() }
            let transport = AsyncHTTPClientTransport()
            let error = await #expect(throws: APIError.self) {
                try await transport.send(TransportRequest(url: URL(string: "http://127.0.0.1:\(port.number)/json")!))
            }
            guard case .transport(let failure, _)? = error else {
                Issue.record("expected a transport failure, got \(String(describing: error))")
                return
            }
            #expect(failure == .cannotConnect)
            try await transport.shutdown()
        }

        @Test(arguments: ["/json", "/chunked"], BufferedSend.allCases)
        func aBodyPastTheLimitIsTooLarge(path: String, way: BufferedSend) async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport(maxResponseBytes: 10)
                let error = await #expect(throws: APIError.self) {
                    try await way.send(TransportRequest(url: server.url(path)), with: transport)
                }
                guard case .responseTooLarge(let limit)? = error else {
                    Issue.record("expected responseTooLarge, got \(String(describing: error))")
                    return
                }
                #expect(limit == 10)
                try await transport.shutdown()
            }
        }

        @Test(arguments: BufferedSend.allCases)
        func aBodyAtTheLimitIsAccepted(way: BufferedSend) async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport(maxResponseBytes: 16)
                let response = try await way.send(TransportRequest(url: server.url("/chunked")), with: transport)
                #expect(response.body.count == 16)
                try await transport.shutdown()
            }
        }

        @Test(arguments: BufferedSend.allCases)
        func aFloodPastTheLimitStopsTheTransfer(way: BufferedSend) async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport(maxResponseBytes: 1 << 20)
                await #expect(throws: APIError.self) {
                    try await way.send(TransportRequest(url: server.url("/flood?bytes=\(256 << 20)")), with: transport)
                }
                #expect(await server.log.first { $0 == .closedEarly(path: "/flood") } == .closedEarly(path: "/flood"))
                try await transport.shutdown()
            }
        }
    }

    /// A loopback port bound but not listening, so that connecting to it is refused, held until released so that no
    /// other test's server can take it meanwhile.
    struct HeldPort {
        let descriptor: Int32
        let number: Int

        init() throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    bind(descriptor, address, length) == 0 && getsockname(descriptor, address, &length) == 0
                }
            }
            guard bound else {
                close(descriptor)
                throw POSIXError(.EADDRINUSE)
            }
            self.descriptor = descriptor
            number = Int(UInt16(bigEndian: address.sin_port))
        }

        func release() { close(descriptor) }
    }
#endif
