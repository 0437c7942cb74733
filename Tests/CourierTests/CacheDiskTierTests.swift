import Foundation
import Testing

@testable import Courier

/// The disk tier: a later cache over the same directory serves what an earlier one stored, the memory tier stays
/// in front, eviction by bytes and recency survives a restart, a corrupted file is discarded, credentials never
/// reach the disk, removals reach it, and a client can fall back on stored data when the server is unreachable.
@Suite struct CacheDiskTierTests {
    private static func request(_ path: String, _ headers: HeaderFields = [:]) -> TransportRequest {
        TransportRequest(url: URL(string: "https://api.test\(path)")!, headers: headers)
    }

    private static func store(
        _ cache: ResponseCache, _ path: String, body: String = "body", headers: HeaderFields = [:],
        partition: String? = nil
    ) async {
        var fields = headers
        fields["Cache-Control"] = fields["Cache-Control"] ?? "max-age=3600"
        let stored = await cache.store(
            .text(200, body, headers: fields), for: request(path), partition: partition, requestTime: Date(),
            responseTime: Date())
        #expect(stored)
    }

    private static func body(_ cache: ResponseCache, _ path: String, partition: String? = nil) async -> String? {
        await cache.cachedResponse(for: request(path), partition: partition).map {
            String(decoding: $0.response.body, as: UTF8.self)
        }
    }

    @Test func aNewCacheOverTheSameDirectoryServesWhatAnEarlierOneStored() async throws {
        let directory = TemporaryDirectory()
        do {
            // One cache per directory at a time: each one here is gone before the next opens it.
            let first = try ResponseCache(directory: directory.url)
            await Self.store(first, "/users/42", body: "Ada", partition: "alice")
            #expect(first.diskCount == 1)
        }
        let transport = MockTransport { _, _ in .text(200, "from the network") }
        do {
            let restarted = try ResponseCache(directory: directory.url)
            #expect(await restarted.count == 0, "memory starts empty")
            // The client's partition is the caller's identity; here the anonymous one differs, so look up directly.
            #expect(await Self.body(restarted, "/users/42", partition: "bob") == nil, "partitions survive the restart")
            #expect(await Self.body(restarted, "/users/42", partition: "alice") == "Ada")
            #expect(await restarted.statistics.diskReads == 1)
            #expect(await Self.body(restarted, "/users/42", partition: "alice") == "Ada")
            #expect(await restarted.statistics.diskReads == 1, "the second hit comes from memory: no disk I/O")
            await Self.store(restarted, "/open", body: "anyone")
        }
        var configuration = APIClient.Configuration(
            transport: transport, cache: try ResponseCache(directory: directory.url), retryPolicy: .never)
        configuration.headers = [:]
        let answer = try await APIClient(baseURL: URL(string: "https://api.test")!, configuration: configuration)
            .send(APIRequest<Data>.get("/open"))
        #expect(answer.source == .cache)
        #expect(String(decoding: answer.data, as: UTF8.self) == "anyone")
        #expect(transport.callCount == 0)
    }

    @Test func evictionByBytesFollowsRecentUseAcrossRestarts() async throws {
        let directory = TemporaryDirectory()
        let body = String(repeating: "x", count: 1_000)
        let fileSize: Int
        do {
            let writer = try ResponseCache(directory: directory.url)
            for path in ["/a", "/b", "/c", "/d"] { await Self.store(writer, path, body: body) }
            fileSize = writer.diskBytes / 4
            #expect(writer.diskCount == 4)
        }
        do {
            let reader = try ResponseCache(directory: directory.url)
            #expect(await Self.body(reader, "/a") == body, "reading /a makes it the most recently used")
        }
        do {
            let smaller = try ResponseCache(directory: directory.url, maxDiskBytes: fileSize * 2 + fileSize / 2)
            #expect(smaller.diskCount == 2)
            #expect(smaller.diskBytes <= fileSize * 2 + fileSize / 2)
            #expect(await Self.body(smaller, "/a") == body)
            #expect(await Self.body(smaller, "/d") == body)
            #expect(await Self.body(smaller, "/b") == nil)
            #expect(await Self.body(smaller, "/c") == nil)
        }
        let bounded = try ResponseCache(directory: directory.url, maxDiskEntries: 1)
        #expect(bounded.diskCount == 1)
    }

    @Test func theDiskTierStaysWithinItsBoundsWhileWriting() async throws {
        let directory = TemporaryDirectory()
        let cache = try ResponseCache(directory: directory.url, maxDiskEntries: 3, maxEntries: 1)
        for index in 0..<10 { await Self.store(cache, "/\(index)") }
        #expect(cache.diskCount == 3)
        #expect(directory.entryFiles.count == 3)
        #expect(await cache.count == 1)
        #expect(await Self.body(cache, "/8") == "body", "evicted from memory, still on disk")
        #expect(await Self.body(cache, "/0") == nil)
    }

    @Test(arguments: ["flip a body byte", "truncate", "flip the checksum", "garbage"])
    func aDamagedFileIsDiscardedNotServed(damage: String) async throws {
        let directory = TemporaryDirectory()
        await Self.store(try ResponseCache(directory: directory.url), "/r", body: "precious")
        let file = try #require(directory.entryFiles.first)
        var bytes = try Data(contentsOf: file)
        switch damage {
        case "flip a body byte": bytes[bytes.count - 2] ^= 0x01
        case "truncate": bytes = bytes.prefix(bytes.count - 3)
        case "flip the checksum": bytes[6] ^= 0x80
        default: bytes = Data("not a cache file".utf8)
        }
        try bytes.write(to: file)
        let restarted = try ResponseCache(directory: directory.url)
        #expect(await Self.body(restarted, "/r") == nil)
        #expect(directory.entryFiles.isEmpty, "the damaged file is removed")
    }

    @Test func credentialsNeverReachTheDisk() async throws {
        let directory = TemporaryDirectory()
        let cache = try ResponseCache(directory: directory.url)
        await Self.store(cache, "/me?api_key=s3cret")
        await cache.store(
            .text(200, "mine", headers: ["Cache-Control": "max-age=60", "Vary": "Authorization"]),
            for: Self.request("/vary", ["Authorization": "Bearer t0ken"]), partition: nil, requestTime: Date(),
            responseTime: Date())
        #expect(cache.diskCount == 0)
        #expect(await cache.count == 2, "both stay in memory")

        await Self.store(cache, "/profile", partition: "alice@example.com")
        let file = try Data(contentsOf: try #require(directory.entryFiles.first))
        #expect(file.range(of: Data("alice@example.com".utf8)) == nil, "the partition is a digest")
    }

    @Test func removalsReachTheDisk() async throws {
        let directory = TemporaryDirectory()
        do {
            let cache = try ResponseCache(directory: directory.url, maxEntries: 1)
            for path in ["/a", "/b/1", "/b/2", "/c", "/d"] { await Self.store(cache, path) }
            await cache.remove(url: URL(string: "https://api.test/a")!)
            #expect(await cache.remove(urlsWithPrefix: URL(string: "https://api.test/b/")!) == 2)
            #expect(await cache.removeAll { url, _ in url.path == "/c" } == 1)
        }
        let restarted = try ResponseCache(directory: directory.url)
        #expect(restarted.diskCount == 1)
        #expect(await Self.body(restarted, "/d") == "body")
        await restarted.removeAll()
        #expect(directory.entryFiles.isEmpty)
    }

    @Test func aDirectoryThatCannotBeUsedIsAClearError() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let file = directory.url.appendingPathComponent("plain-file")
        try Data("x".utf8).write(to: file)
        #expect(throws: ResponseCache.StorageError.self) { try ResponseCache(directory: file) }
    }

    // MARK: Offline

    @Test(arguments: [CachePolicy.returnCacheWhenOffline, .useProtocolPolicy])
    func storedDataAnswersWhenTheServerIsUnreachable(policy: CachePolicy) async throws {
        let directory = TemporaryDirectory()
        let date = TestDate()
        let transport = MockTransport { _, index in
            if index == 0 {
                return .text(
                    200, "last known", headers: ["Cache-Control": "max-age=60, must-revalidate", "ETag": #""e""#])
            }
            throw APIError.transport(.cannotConnect, underlying: URLError(.cannotConnectToHost))
        }
        let configuration = APIClient.Configuration(
            transport: transport, cache: try ResponseCache(directory: directory.url), retryPolicy: .never,
            currentDate: { date.now })
        let client = APIClient(baseURL: URL(string: "https://api.test")!, configuration: configuration)
        _ = try await client.send(APIRequest<Data>.get("/feed"))
        date.advance(by: 3_600)
        let request = APIRequest<Data>(path: "/feed", cachePolicy: policy)
        if policy == .returnCacheWhenOffline {
            let answer = try await client.send(request)
            #expect(answer.source == .cache)
            #expect(String(decoding: answer.data, as: UTF8.self) == "last known")
        } else {
            await #expect(throws: APIError.self) { try await client.send(request) }
        }
        #expect(transport.callCount == 2)
    }
}
