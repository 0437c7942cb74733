import Foundation
import Testing

@testable import Courier

/// A `304` that validates an entry which has left the memory tier but is still on disk is merged into the disk
/// entry, and the entry returns to memory: the caller is served the stored body, no unconditional resend.
@Suite struct CacheDiskRevalidationTests {
    private static let request = TransportRequest(url: URL(string: "https://api.test/doc")!)
    private static let notModified = TransportResponse(
        statusCode: 304, headers: ["ETag": #""v1""#, "Cache-Control": "max-age=600", "X-Seen": "304"])

    private static func store(_ cache: ResponseCache, _ path: String, at date: Date) async {
        await cache.store(
            .text(200, "stored body", headers: ["ETag": #""v1""#, "Cache-Control": "max-age=60"]),
            for: TransportRequest(url: URL(string: "https://api.test\(path)")!), partition: nil, requestTime: date,
            responseTime: date)
    }

    @Test func aNotModifiedForAnEntryOnlyOnDiskIsMerged() async throws {
        let directory = TemporaryDirectory()
        let cache = try ResponseCache(directory: directory.url, maxEntries: 1)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        await Self.store(cache, "/doc", at: start)
        let later = start.addingTimeInterval(120)
        guard case .validate(let entry, _) = await cache.lookup(Self.request, partition: nil, now: later) else {
            Issue.record("a stale entry with an ETag is validated")
            return
        }
        await Self.store(cache, "/other", at: later)  // /doc leaves memory while its validation is out

        let updated = await cache.revalidated(
            entry, with: Self.notModified, for: Self.request, partition: nil, requestTime: later, responseTime: later)
        #expect(updated.map { String(decoding: $0.response.body, as: UTF8.self) } == "stored body")
        #expect(updated?.response.headers["X-Seen"] == "304")
        #expect(await cache.statistics.revalidations == 1)
        let hit = await cache.lookup(Self.request, partition: nil, now: later.addingTimeInterval(1))
        guard case .hit(let served) = hit else {
            Issue.record("the merged entry is fresh again: \(hit)")
            return
        }
        #expect(served.response.headers["X-Seen"] == "304")
    }

    @Test func theClientServesTheStoredBodyWithoutAnUnconditionalResend() async throws {
        let directory = TemporaryDirectory()
        let date = TestDate()
        let cache = try ResponseCache(directory: directory.url, maxEntries: 1)
        let transport = MockTransport { request, _ in
            if request.url.path == "/doc", request.headers["If-None-Match"] != nil {
                await Self.store(cache, "/other", at: date.now)  // /doc leaves memory while its validation is out
                return Self.notModified
            }
            let fields: HeaderFields = ["ETag": #""v1""#, "Cache-Control": "max-age=60"]
            return .text(200, "body of \(request.url.path)", headers: fields)
        }
        let client = APIClient(
            baseURL: URL(string: "https://api.test")!,
            configuration: .init(transport: transport, cache: cache, retryPolicy: .never, currentDate: { date.now }))
        _ = try await client.send(APIRequest<Data>.get("/doc"))
        date.advance(by: 120)
        let answer = try await client.send(APIRequest<Data>.get("/doc"))
        #expect(String(decoding: answer.data, as: UTF8.self) == "body of /doc")
        #expect(answer.source == .revalidated)
        #expect(transport.callCount == 2, "no unconditional resend")
    }
}
