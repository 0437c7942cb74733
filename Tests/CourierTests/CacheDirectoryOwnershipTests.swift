import Foundation
import Testing

@testable import Courier

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A disk cache deletes only files it wrote, never follows a symbolic link, keeps one opener per directory, and
/// keeps what it writes to its owner; a write whose rename fails says so.
@Suite struct CacheDirectoryOwnershipTests {
    private static let manager = FileManager.default

    private static func write(_ text: String, to url: URL) throws {
        try manager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    private static func store(_ cache: ResponseCache, _ path: String) async -> Bool {
        await cache.store(
            .text(200, "body", headers: ["Cache-Control": "max-age=3600"]),
            for: TransportRequest(url: URL(string: "https://api.test\(path)")!), partition: nil, requestTime: Date(),
            responseTime: Date())
    }

    @Test func openingAnApplicationDirectoryDeletesNoneOfItsFiles() async throws {
        let directory = TemporaryDirectory()
        let draft = directory.url.appendingPathComponent("tmp/unsaved-draft.txt")
        let notes = directory.url.appendingPathComponent("entries/notes.txt")
        let report = directory.url.appendingPathComponent("entries/report.entry")
        for file in [draft, notes, report] { try Self.write("mine: \(file.lastPathComponent)", to: file) }

        let cache = try ResponseCache(directory: directory.url)
        #expect(await Self.store(cache, "/a"))

        for file in [draft, notes, report] {
            let text = try? String(contentsOf: file, encoding: .utf8)
            #expect(text == "mine: \(file.lastPathComponent)", "\(file.lastPathComponent) is kept")
        }
    }

    @Test func aLinkedTemporaryDirectoryIsNeverFollowed() throws {
        let directory = TemporaryDirectory()
        let elsewhere = TemporaryDirectory()
        let precious = (1...3).map { elsewhere.url.appendingPathComponent("file-\($0).txt") }
        for file in precious { try Self.write("precious", to: file) }
        try Self.manager.createDirectory(at: directory.url, withIntermediateDirectories: true)
        try Self.manager.createSymbolicLink(
            at: directory.url.appendingPathComponent("tmp"), withDestinationURL: elsewhere.url)

        _ = try? ResponseCache(directory: directory.url)

        #expect(precious.filter { Self.manager.fileExists(atPath: $0.path) }.count == 3)
    }

    @Test func aCourierDirectoryItDidNotMakeIsRefusedAndLeftAlone() throws {
        let directory = TemporaryDirectory()
        let stranger = directory.ownedDirectory.appendingPathComponent("report.txt")
        try Self.write("not a cache", to: stranger)
        let refusal = #expect(throws: ResponseCache.StorageError.self) { try ResponseCache(directory: directory.url) }
        #expect(refusal?.reason == .notCourierOwned)
        #expect((try? String(contentsOf: stranger, encoding: .utf8)) == "not a cache")
    }

    @Test func aLinkInsideTheOwnedDirectoryIsRefused() throws {
        let directory = TemporaryDirectory()
        let elsewhere = TemporaryDirectory()
        let precious = elsewhere.url.appendingPathComponent("precious.partial")
        try Self.write("precious", to: precious)
        _ = try ResponseCache(directory: directory.url)  // made, marked, and released at once
        try Self.manager.removeItem(at: directory.stagingDirectory)
        try Self.manager.createSymbolicLink(at: directory.stagingDirectory, withDestinationURL: elsewhere.url)

        let refusal = #expect(throws: ResponseCache.StorageError.self) { try ResponseCache(directory: directory.url) }
        #expect(refusal?.reason == .notCourierOwned)
        #expect(Self.manager.fileExists(atPath: precious.path))
    }

    @Test func onlyItsOwnNamesAreRemovedFromItsDirectory() async throws {
        let directory = TemporaryDirectory()
        _ = try ResponseCache(directory: directory.url)
        let staged = directory.stagingDirectory.appendingPathComponent(UUID().uuidString + ".partial")
        let foreign = directory.stagingDirectory.appendingPathComponent("notes.txt")
        let torn = directory.entriesDirectory.appendingPathComponent(String(repeating: "a", count: 64) + ".entry")
        let other = directory.entriesDirectory.appendingPathComponent("readme.entry")
        for file in [staged, foreign, torn, other] { try Self.write("x", to: file) }

        _ = try ResponseCache(directory: directory.url)

        #expect(!Self.manager.fileExists(atPath: staged.path), "a staged write a crash left is removed")
        #expect(!Self.manager.fileExists(atPath: torn.path), "a torn entry is removed")
        #expect(Self.manager.fileExists(atPath: foreign.path))
        #expect(Self.manager.fileExists(atPath: other.path))
    }

    @Test func aSecondOpenerOfOneDirectoryIsRefusedUntilTheFirstIsGone() async throws {
        let directory = TemporaryDirectory()
        var first: ResponseCache? = try ResponseCache(directory: directory.url)
        let refusal = #expect(throws: ResponseCache.StorageError.self) { try ResponseCache(directory: directory.url) }
        #expect(refusal?.reason == .inUse)
        #expect(refusal?.description.contains("one cache per directory") == true, "\(String(describing: refusal))")
        #expect(await Self.store(try #require(first), "/a"))
        first = nil
        let second = try ResponseCache(directory: directory.url)
        #expect(second.diskCount == 1, "once the first is gone, the directory opens with what it stored")
    }

    @Test func filesAreReadableByTheOwnerOnly() async throws {
        let directory = TemporaryDirectory()
        let cache = try ResponseCache(directory: directory.url)
        #expect(await Self.store(cache, "/a"))
        var checked = 0
        var modes: [String: mode_t] = [:]
        var pending = [directory.url.path]
        while let path = pending.popLast() {
            var info = stat()
            #expect(lstat(path, &info) == 0)
            modes[path] = info.st_mode & 0o777
            checked += 1
            if info.st_mode & S_IFMT == S_IFDIR {
                #expect(info.st_mode & 0o777 == 0o700, "directory \(path)")
                pending += ((try? Self.manager.contentsOfDirectory(atPath: path)) ?? []).map { path + "/" + $0 }
            } else {
                #expect(info.st_mode & 0o777 == 0o600, "file \(path)")
            }
        }
        #expect(checked >= 3, "the directory, the entries' directory and an entry were checked: \(modes)")
    }

    @Test func aWriteWhoseRenameFailsSaysSo() throws {
        let directory = TemporaryDirectory()
        let limits = DiskStore.Limits(maxEntries: 10, maxBytes: 1 << 20, maxEntryBytes: 1 << 20)
        let store = try DiskStore(directory: directory.url, limits: limits)
        let request = TransportRequest(url: URL(string: "https://api.test/a")!)
        let entry = CachedResponse(
            response: .text(200, "body", headers: ["Cache-Control": "max-age=60"]), request: request,
            requestTime: Date(), responseTime: Date())
        let record = DiskRecord(url: "https://api.test/a", partition: "p", varyNames: [], varyValues: [])
        // A non-empty directory where the file goes: no rename can replace it.
        let blocker = directory.entriesDirectory.appendingPathComponent(record.fileName)
        try Self.write("in the way", to: blocker.appendingPathComponent("inside"))

        #expect(!store.write(entry, record: record, replacing: request.headers, ticket: store.reserve()))
        #expect(store.count == 0)
    }
}
