import Foundation
import Testing

@testable import Courier

/// A disk write that is overtaken before it commits never undoes what overtook it: an invalidation that removed the
/// entry, or a newer write of the same variant. The overtaking step runs inside the write, at the seam between
/// staging the file and renaming it into place, so the interleaving happens every time.
@Suite struct CacheWriteOrderTests {
    private static let url = "https://api.test/doc"
    private static let get = TransportRequest(url: URL(string: url)!)

    private static func response(_ body: String) -> TransportResponse {
        .text(200, body, headers: ["Cache-Control": "max-age=3600"])
    }

    /// Whether this is the first call with `flag`: the overtaking step runs once, at the first commit.
    private static func isFirst(_ flag: Locked<Bool>) -> Bool {
        flag.withLock { done in
            defer { done = true }
            return !done
        }
    }

    @discardableResult
    private static func store(_ cache: ResponseCache, _ body: String, path: String = "/doc") async -> Bool {
        await cache.store(
            response(body), for: TransportRequest(url: URL(string: "https://api.test\(path)")!), partition: nil,
            requestTime: Date(), responseTime: Date())
    }

    @Test func anInvalidationDuringTheDiskWriteIsNotUndone() async throws {
        let directory = TemporaryDirectory()
        let probe = DiskStoreProbe()
        let cache = try ResponseCache(directory: directory.url, probe: probe)
        let overtaken = Locked(false)
        probe.beforeCommit { url in
            guard Self.isFirst(overtaken) else { return }
            // What a successful PUT of the URL does, between the memory insert and the rename.
            cache.removeAll(urls: [url])
        }
        await Self.store(cache, "old")

        #expect(cache.diskCount == 0, "the invalidated write is dropped")
        let lookup = await cache.lookup(Self.get, partition: nil, now: Date())
        guard case .miss = lookup else {
            Issue.record("the invalidated body is served: \(lookup)")
            return
        }
    }

    /// Under real parallelism: a store and an invalidation of one URL race, round after round. Whichever memory
    /// saw last, the disk agrees with it once both are done: both hold the same body, or neither holds one.
    @Test func theDiskAgreesWithMemoryAfterAStoreRacesAnInvalidation() async throws {
        let directory = TemporaryDirectory()
        let cache = try ResponseCache(directory: directory.url)
        let disk = try #require(cache.disk)
        let rounds = 300
        var agreeing = 0
        for round in 0..<rounds {
            async let stored: Bool = Self.store(cache, "body \(round)")
            async let invalidated: Int = cache.invalidate(
                for: TransportRequest(method: .put, url: URL(string: Self.url)!),
                response: TransportResponse(statusCode: 204))
            _ = await (stored, invalidated)
            // Each tier read on its own: a lookup would fill memory from the disk.
            let partition = CachePartition(identity: nil, request: Self.get)
            let inMemory = cache.state.withLock {
                $0.storage.candidates(url: URLText(Self.url), partition: partition).first?.entry
            }
            let onDisk = disk.load(url: Self.url, partition: { partition.digest }, matching: [:])
            let memoryBody = inMemory.map { String(decoding: $0.response.body, as: UTF8.self) }
            let diskBody = onDisk?.entries.first.map { String(decoding: $0.response.body, as: UTF8.self) }
            if let onDisk { disk.finish(onDisk.ticket) }
            if memoryBody == diskBody { agreeing += 1 }
        }
        #expect(agreeing == rounds)
    }

    @Test func anOlderWriteNeverReplacesANewerFile() async throws {
        let directory = TemporaryDirectory()
        let probe = DiskStoreProbe()
        let cache = try ResponseCache(directory: directory.url, maxEntries: 1, probe: probe)
        let overtaken = Locked(false)
        probe.beforeCommit { _ in
            guard Self.isFirst(overtaken) else { return }
            // A newer response for the same URL is stored, memory and disk, while the first write waits to commit.
            let newer = cache.storeCountingEvictions(
                Self.response("new"), for: Self.get, partition: nil, requestTime: Date(), responseTime: Date())
            #expect(newer.storedBytes != nil)
        }
        await Self.store(cache, "old")
        await Self.store(cache, "other", path: "/other")  // evicts /doc from memory: the next read is the file's

        let entry = await cache.cachedResponse(for: Self.get, partition: nil)
        #expect(entry.map { String(decoding: $0.response.body, as: UTF8.self) } == "new")
    }
}
