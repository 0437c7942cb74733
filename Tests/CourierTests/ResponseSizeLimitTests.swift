import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `URLSessionTransport.maxResponseBytes` over real sockets: decoded bytes are counted as they arrive, so neither
/// a decompression bomb nor an endless body is ever held whole.
@Suite(.timeLimit(.minutes(1))) struct ResponseSizeLimitTests {
    private static let mebibyte = 1 << 20

    private static func client(_ server: TestServer, _ transport: URLSessionTransport) -> APIClient {
        APIClient(
            baseURL: server.baseURL,
            configuration: .init(transport: transport, cache: nil, retryPolicy: .default, clock: TestClock()))
    }

    private static func error(_ client: APIClient, _ request: APIRequest<Data>) async -> (any Error)? {
        do {
            _ = try await client.send(request)
            return nil
        } catch {
            return error
        }
    }

    /// Whether `error` is `responseTooLarge` with `limit`.
    private static func isTooLarge(_ error: (any Error)?, limit: Int) -> Bool {
        guard case .responseTooLarge(let reported)? = error as? APIError else { return false }
        return reported == limit
    }

    @Test func theLimitIsOnByDefaultAt64MiB() {
        #expect(URLSessionTransport().maxResponseBytes == 64 * Self.mebibyte)
        #expect(URLSessionTransport(maxResponseBytes: -5).maxResponseBytes == 0)
    }

    @Test func aGzipBombFailsAtTheLimitInsteadOfInflating() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let repeats = 32_768  // 8 MiB of zeros in about 52 KiB of gzip
        let bomb = GzipBomb.zeros(repeats: repeats)
        server.route("GET", "/bomb") { _ in .init(status: 200, headers: [("Content-Encoding", "gzip")], body: bomb) }

        let limited = Self.client(server, URLSessionTransport(maxResponseBytes: Self.mebibyte))
        let error = await Self.error(limited, .get("/bomb"))
        #expect(Self.isTooLarge(error, limit: Self.mebibyte), "got \(String(describing: error))")
        #expect(server.hits("/bomb") == 1, "a response that is too large is not retried")

        // The same stream under a higher limit inflates exactly: it is valid gzip, the limit alone stopped it.
        let roomy = Self.client(server, URLSessionTransport(maxResponseBytes: 16 * Self.mebibyte))
        let whole = try await roomy.send(APIRequest<Data>.get("/bomb"))
        #expect(whole.value.count == GzipBomb.decodedCount(repeats: repeats))
        #expect(whole.value.allSatisfy { $0 == 0 })
        ReliabilityKit.record(
            "fault", "gzip bomb: 52 KiB inflating to 8 MiB, 1 MiB limit", cases: 1,
            outcome: "APIError.responseTooLarge(limit: 1048576) at the limit; not retried")
    }

    /// A body announced as 1 GiB (`Content-Length`) or without end (`Connection: close`), of which the server sends
    /// 4 MiB and then nothing more, holding the connection open: the limit has to act on what arrived.
    private static func unfinishedRoute(_ server: TestServer, _ path: String, announced: Bool) {
        let framing = announced ? "Content-Length: \(1 << 30)" : "Connection: close"
        let head = Data("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\(framing)\r\n\r\n".utf8)
        let chunk = Data(repeating: UInt8(ascii: "x"), count: 64 << 10)
        server.route("GET", path) { _ in .repeated(head: head, chunk: chunk, count: 64, holdOpen: true) }
    }

    /// Fails `path` against a 1 MiB limit while the body is unfinished. The client's deadline (30 s on the real
    /// clock) only turns a transport that waits for the body into a clear failure.
    private static func expectStoppedEarly(_ server: TestServer, _ path: String) async {
        let client = APIClient(
            baseURL: server.baseURL,
            configuration: .init(
                transport: URLSessionTransport(maxResponseBytes: Self.mebibyte), cache: nil, retryPolicy: .default,
                timeout: .seconds(30)))
        let error = await Self.error(client, .get(path))
        #expect(Self.isTooLarge(error, limit: Self.mebibyte), "got \(String(describing: error))")
        #expect(server.hits(path) == 1, "a response that is too large is not retried")
    }

    @Test func anEndlessBodyFailsAtTheLimitWithoutWaitingForItsEnd() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        Self.unfinishedRoute(server, "/endless", announced: false)
        await Self.expectStoppedEarly(server, "/endless")
        ReliabilityKit.record(
            "fault", "body without Content-Length that never ends (4 MiB sent, then silence), 1 MiB limit", cases: 1,
            outcome: "APIError.responseTooLarge as the bytes arrive; not retried")
    }

    @Test func aContentLengthPastTheLimitFailsAtTheHead() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        Self.unfinishedRoute(server, "/huge", announced: true)
        await Self.expectStoppedEarly(server, "/huge")
    }

    /// The limit is on decoded bytes: the `Content-Length` of an encoded body counts encoded ones, so it cannot
    /// refuse the response at the head, whichever case the coding is written in.
    @Test(arguments: ["gzip", "GZip"])
    func theContentLengthOfAnEncodedBodyIsNotHeldAgainstTheLimit(coding: String) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let encoded = GzipBomb.stored(zeros: 1_000)
        server.route("GET", "/stored") { _ in .init(status: 200, headers: [("Content-Encoding", coding)], body: encoded)
        }
        let client = Self.client(server, URLSessionTransport(maxResponseBytes: 1_010))

        let response = try await client.send(APIRequest<Data>.get("/stored"))

        #expect(encoded.count > 1_010)
        #expect(response.value == Data(count: 1_000))
    }

    @Test func aBodyOfExactlyTheLimitIsAcceptedAndOneByteMoreIsNot() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("GET", "/exact") { _ in .text(String(repeating: "e", count: 1_000)) }
        server.route("GET", "/over") { _ in .text(String(repeating: "o", count: 1_001)) }
        // A HEAD announces a length but has no body: it is not refused for the length.
        let announced = Data("HTTP/1.1 200 OK\r\nContent-Length: \(1 << 30)\r\n\r\n".utf8)
        server.route("HEAD", "/over") { _ in .raw(announced, close: false) }
        let client = Self.client(server, URLSessionTransport(maxResponseBytes: 1_000))

        let exact = try await client.send(APIRequest<Data>.get("/exact"))
        let error = await Self.error(client, .get("/over"))
        let head = try await client.send(APIRequest<Data>.head("/over"))

        #expect(exact.value.count == 1_000)
        #expect(Self.isTooLarge(error, limit: 1_000))
        #expect(String(describing: error!).contains("larger than the limit of 1000 bytes"))
        #expect(head.statusCode == 200)
        #expect(head.headers["Content-Length"] == String(1 << 30))
    }

    @Test func aSessionTheTransportDidNotMakeStillEnforcesTheLimitAtTheEnd() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("GET", "/big") { _ in .init(status: 200, body: Data(count: 2 * Self.mebibyte)) }
        server.route("GET", "/small") { _ in .text("small") }
        let session = URLSession(configuration: URLSessionTransport.defaultConfiguration)
        defer { session.invalidateAndCancel() }
        let client = Self.client(server, URLSessionTransport(session: session, maxResponseBytes: Self.mebibyte))

        let error = await Self.error(client, .get("/big"))
        let small = try await client.send(APIRequest<Data>.get("/small"))

        #expect(Self.isTooLarge(error, limit: Self.mebibyte), "got \(String(describing: error))")
        #expect(small.value == Data("small".utf8))
    }
}
