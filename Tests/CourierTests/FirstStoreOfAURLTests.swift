import Foundation
import Testing

@testable import Courier

/// A URL stored for the first time is indexed in the same lookup that finds nothing stored for it: the storage stays
/// consistent whether the entry fits or not, whether it takes a freed slot or a new one, and for a partitioned URL.
@Suite struct FirstStoreOfAURLTests {
    private static func entry(bytes: Int) -> CachedResponse {
        let response = TransportResponse(
            statusCode: 200, headers: ["Cache-Control": "max-age=60"], body: Data(repeating: 1, count: bytes))
        let request = TransportRequest(url: URL(string: "https://api.test/x")!)
        return CachedResponse(response: response, request: request, requestTime: Date(), responseTime: Date())
    }

    private static func url(_ key: Int) -> URLText { URLText("https://api.test/items?key=\(key)") }

    private static let anonymous = CachePartition(
        identity: nil, request: TransportRequest(url: URL(string: "https://api.test")!))

    @Test func anEntryTooLargeForANewURLLeavesNothingIndexed() {
        var storage = CacheStorage(limits: .init(maxEntries: 4, maxBytes: 10_000, maxEntryBytes: 1_000))
        let insertion = storage.insert(
            Self.entry(bytes: 2_000), url: Self.url(1), partition: Self.anonymous, replacing: [:])
        #expect(insertion == CacheStorage.Insertion(stored: false, replaced: 0, evicted: 0))
        #expect(storage.count == 0 && storage.urls.isEmpty && storage.isConsistent)
    }

    @Test func newURLsTakeFreedSlotsAndEvictTheOldest() {
        var storage = CacheStorage(limits: .init(maxEntries: 3, maxBytes: 100_000, maxEntryBytes: 10_000))
        var generations: Set<UInt64> = []
        for key in 0..<10 {
            let insertion = storage.insert(
                Self.entry(bytes: 10), url: Self.url(key), partition: Self.anonymous, replacing: [:])
            #expect(insertion.stored && insertion.evicted == (key < 3 ? 0 : 1))
            generations.insert(insertion.generation)
            #expect(storage.isConsistent)
        }
        #expect(generations.count == 10)
        #expect(storage.urls == Set((7..<10).map { Self.url($0).text }))
        #expect(storage.entriesFromOldest.map(\.url) == (7..<10).map { Self.url($0).text })
    }

    @Test func aURLStoredAgainIsReplacedNotIndexedTwice() {
        var storage = CacheStorage(limits: .init(maxEntries: 3, maxBytes: 100_000, maxEntryBytes: 10_000))
        _ = storage.insert(Self.entry(bytes: 10), url: Self.url(1), partition: Self.anonymous, replacing: [:])
        let again = storage.insert(Self.entry(bytes: 20), url: Self.url(1), partition: Self.anonymous, replacing: [:])
        #expect(again.stored && again.replaced == 1)
        #expect(storage.count == 1 && storage.totalBytes == Self.entry(bytes: 20).byteCount && storage.isConsistent)
    }

    @Test func aPartitionedURLIsIndexedUnderItsPartition() {
        var storage = CacheStorage(limits: .init(maxEntries: 3, maxBytes: 100_000, maxEntryBytes: 10_000))
        var request = TransportRequest(url: URL(string: "https://api.test")!)
        request.headers["Authorization"] = "Bearer a"
        let user = CachePartition(identity: "a", request: request)
        _ = storage.insert(Self.entry(bytes: 10), url: Self.url(1), partition: user, replacing: [:])
        _ = storage.insert(Self.entry(bytes: 10), url: Self.url(1), partition: Self.anonymous, replacing: [:])
        #expect(storage.count == 2 && storage.isConsistent)
        #expect(storage.candidates(url: Self.url(1), partition: user).count == 1)
        #expect(storage.candidates(url: Self.url(1), partition: Self.anonymous).count == 1)
    }
}
