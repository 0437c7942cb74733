import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport made from ``URLSessionTransport/defaultConfiguration`` keeps its connections when the load dips.
///
/// libcurl keeps at most four idle connections per transfer in flight (`CURLMOPT_MAXCONNECTS` defaults to four times
/// the transfers added), and the connection gate keeps the transfers in flight per host at the connection limit. With
/// six connections per host, each time the load dipped to one transfer libcurl closed an idle connection, and the next
/// burst connected again: under a starved CPU those reconnections turned into a storm of socket events (issue 30).
@Suite(.timeLimit(.minutes(1))) struct ConnectionReuseTests {
    @Test func aDipToOneRequestNeverMakesTheTransportReplaceAConnection() async throws {
        #if canImport(FoundationNetworking)
            let server = try TestServer()
            defer { server.shutdown() }
            let transport = URLSessionTransport()
            let limit = transport.gate.limit
            for burst in ["/first", "/second"] {
                // Answered only once every request of the burst arrived: each has a connection of its own.
                server.route(burst) { [weak server] _ in
                    await server?.waitForHits(burst, count: limit)
                    return .text("ok")
                }
            }
            server.route("/alone") { _ in .text("ok") }
            let url = server.baseURL

            try await Self.burst(of: limit, to: url.appendingPathComponent("first"), with: transport)
            #expect(server.acceptedConnections == limit)
            // One request alone: libcurl then keeps as many idle connections as one transfer in flight allows.
            _ = try await transport.send(TransportRequest(url: url.appendingPathComponent("alone")))
            try await Self.burst(of: limit, to: url.appendingPathComponent("second"), with: transport)
            #expect(server.acceptedConnections == limit, "idle connections were closed and opened again")
        #endif
    }

    private static func burst(of count: Int, to url: URL, with transport: URLSessionTransport) async throws {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<count {
                group.addTask { try await transport.send(TransportRequest(url: url)).statusCode }
            }
            for try await status in group { #expect(status == 200) }
        }
    }
}
