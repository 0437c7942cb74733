import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Response header values with bytes ≥ 0x80 (RFC 9110 §5.5 obs-text), over real sockets.
@Suite(.timeLimit(.minutes(1))) struct ResponseHeaderEncodingTests {
    private static func client(_ server: TestServer) -> APIClient {
        APIClient(
            baseURL: server.baseURL,
            configuration: .init(
                transport: URLSessionTransport(), cache: nil, retryPolicy: .default, clock: TestClock()))
    }

    /// `Content-Disposition: attachment; filename="<name>"` with `name` in the given bytes, and a 2-byte body.
    private static func route(_ server: TestServer, _ path: String, filename: [UInt8]) {
        let head =
            Data("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Disposition: attachment; filename=\"".utf8)
            + Data(filename) + Data("\"\r\n\r\nok".utf8)
        server.route("GET", path) { _ in .raw(head, close: false) }
    }

    @Test func aLatin1HeaderValueFailsWithAClearReason() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        Self.route(server, "/latin1", filename: [0xE9, 0x74, 0xE9] + Array(".txt".utf8))  // "été.txt" in ISO-8859-1

        let outcome: Result<APIResponse<Data>, any Error>
        do {
            outcome = .success(try await Self.client(server).send(.get("/latin1")))
        } catch {
            outcome = .failure(error)
        }

        #if canImport(FoundationNetworking)
            // FoundationNetworking decodes each header line as UTF-8 and aborts the transfer on this one, before
            // Courier sees a byte: the best the transport can do is say so, without retrying.
            guard case .failure(APIError.invalidResponse(let reason, let cause?)) = outcome else {
                Issue.record("expected invalidResponse, got \(outcome)")
                return
            }
            #expect(reason == URLSessionTransport.unreadableHeadReason)
            #expect((cause as? URLError)?.code == .unknown)
            #expect(server.hits("/latin1") == 1)
        #else
            // Apple's URLSession reads the value as ISO-8859-1.
            #expect(try outcome.get().headers["Content-Disposition"] == "attachment; filename=\"été.txt\"")
        #endif
    }

    @Test func aUTF8HeaderValueIsKept() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        Self.route(server, "/utf8", filename: Array("été.txt".utf8))

        let response = try await Self.client(server).send(APIRequest<Data>.get("/utf8"))

        #expect(response.value == Data("ok".utf8))
        #expect(response.headers["Content-Disposition"] == "attachment; filename=\"été.txt\"")
    }
}
