import Foundation
import Testing

@testable import Courier

/// The recent URLs answer a path that comes again from the entry it last found (every joiner of a flight asks for the
/// same path), without hashing it. That entry must never outlive what the table holds: a path kept again, a plain
/// `GET` kept beside an entry, and the table starting over when full each replace or drop it.
@Suite struct RecentURLsLastFoundTests {
    private static func entry(_ path: String) -> RecentURLs.Entry {
        let text = "https://api.example.com" + path
        return RecentURLs.Entry(URL(string: text)!, normalizedText: URLText(text), key: .path(path))
    }

    @Test func aPathAskedAgainGetsItsEntryAndAnotherPathGetsItsOwn() {
        let recent = RecentURLs()
        let first = Self.entry("/a")
        let second = Self.entry("/b")
        recent.remember(first)
        recent.remember(second)
        #expect(recent.url(forPath: "/a") === first)
        #expect(recent.url(forPath: "/a") === first)
        #expect(recent.url(forPath: "/b") === second)
        #expect(recent.url(forPath: "/a") === first)
        #expect(recent.url(forPath: "/c") == nil)
        // A path equal to the last one but built apart (not the same string storage) is the same path.
        #expect(recent.url(forPath: String("/a/x".dropLast(2))) === first)
    }

    @Test func aPathKeptAgainIsAnsweredWithItsNewEntry() {
        let recent = RecentURLs()
        let old = Self.entry("/a")
        recent.remember(old)
        #expect(recent.url(forPath: "/a") === old)
        let new = Self.entry("/a")
        recent.remember(new)
        #expect(recent.url(forPath: "/a") === new)
    }

    @Test func anEntryWithItsPlainGETKeptReplacesTheOneLastFound() throws {
        let recent = RecentURLs()
        let entry = Self.entry("/a")
        recent.remember(entry)
        #expect(recent.url(forPath: "/a") === entry)
        let request = TransportRequest(url: entry.url)
        recent.keep(
            RecentURLs.PlainGET(request: request, isTrusted: true, sharingKey: RequestKey(request)), for: entry)
        let kept = try #require(recent.url(forPath: "/a"))
        #expect(kept !== entry)
        #expect(kept.plainGET?.request == request)
    }

    @Test func aTableThatStartsOverForgetsTheEntryLastFound() {
        let recent = RecentURLs()
        let first = Self.entry("/first")
        recent.remember(first)
        #expect(recent.url(forPath: "/first") === first)
        for index in 1..<RecentURLs.capacity { recent.remember(Self.entry("/\(index)")) }
        // Full: the next one starts the table over.
        recent.remember(Self.entry("/last"))
        #expect(recent.count == 1)
        #expect(recent.url(forPath: "/first") == nil)
    }
}
