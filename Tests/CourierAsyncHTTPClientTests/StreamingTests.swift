#if AsyncHTTPClient
    import Courier
    import CourierAsyncHTTPClient
    import Foundation
    import Testing

    /// Streamed response bodies over real sockets: back-pressure, failures mid-body, and stopping a transfer.
    @Suite("AsyncHTTPClientTransport: streaming", .timeLimit(.minutes(2)))
    struct StreamingTests {
        /// The reader pauses every 4 MiB until the server reports that it cannot write more. With back-pressure the
        /// server is then ahead of the reader by no more than the sockets' buffers and a few of AsyncHTTPClient's;
        /// a transport that buffered without bound would let the server write everything while the reader waits.
        @Test func slowReaderHoldsTheServerBack() async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                let total = 96 << 20
                let bound = 16 << 20
                let response = try await transport.stream(TransportRequest(url: server.url("/flood?bytes=\(total)")))
                #expect(response.headers["Content-Length"] == "\(total)")
                var read = 0
                var nextPause = 4 << 20
                var lastBlock = 0
                var pauses = 0
                for try await chunk in response.body {
                    read += chunk.count
                    guard read >= nextPause else { continue }
                    nextPause += 4 << 20
                    let since = lastBlock
                    let event = await server.log.first { event in
                        switch event {
                        case .blocked(let written): written > since
                        case .finished: true
                        default: false
                        }
                    }
                    guard case .blocked(let written)? = event else {
                        if read < total - bound {
                            Issue.record("the server finished while the reader had read \(read)")
                        }
                        continue
                    }
                    pauses += 1
                    lastBlock = written
                    #expect(written - read <= bound, "the server wrote \(written - read) bytes past the reader")
                }
                #expect(read == total)
                #expect(pauses >= 10)
                try await transport.shutdown()
            }
        }

        @Test func connectionResetMidBodyIsAConnectionLoss() async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                let error = await #expect(throws: APIError.self) {
                    try await transport.send(TransportRequest(url: server.url("/reset")))
                }
                guard case .transport(let failure, _)? = error else {
                    Issue.record("expected a transport failure, got \(String(describing: error))")
                    return
                }
                #expect(failure == .connectionLost)
                try await transport.shutdown()
            }
        }

        @Test func cancellingAStreamedReaderClosesTheConnection() async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                let firstChunk = AsyncStream<Void>.makeStream()
                let reader = Task {
                    let response = try await transport.stream(TransportRequest(url: server.url("/stall")))
                    var received = 0
                    for try await chunk in response.body {
                        received += chunk.count
                        firstChunk.continuation.yield()
                    }
                    return received
                }
                var signals = firstChunk.stream.makeAsyncIterator()
                _ = await signals.next()
                reader.cancel()
                await #expect(throws: CancellationError.self) { try await reader.value }
                #expect(await server.log.first { $0 == .closedEarly(path: "/stall") } == .closedEarly(path: "/stall"))
                try await transport.shutdown()
            }
        }

        @Test func droppingAnUnreadBodyClosesTheConnection() async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                do {
                    let response = try await transport.stream(TransportRequest(url: server.url("/stall")))
                    var iterator = response.body.makeAsyncIterator()
                    #expect(try await iterator.next() != nil)
                }
                #expect(await server.log.first { $0 == .closedEarly(path: "/stall") } == .closedEarly(path: "/stall"))
                try await transport.shutdown()
            }
        }

        @Test(arguments: BufferedSend.allCases)
        func cancellingABufferedSendStopsTheTransfer(way: BufferedSend) async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                let sender = Task { try await way.send(TransportRequest(url: server.url("/stall")), with: transport) }
                _ = await server.log.first { $0 == .responding(path: "/stall") }
                sender.cancel()
                await #expect(throws: CancellationError.self) { try await sender.value }
                #expect(await server.log.first { $0 == .closedEarly(path: "/stall") } == .closedEarly(path: "/stall"))
                try await transport.shutdown()
            }
        }
    }
#endif
