import Foundation

/// The URLs a client built lately, so that a URL called again is neither built nor parsed again.
///
/// `URL(string:)` costs about 3,400 instructions and 3 allocations on Linux, a tenth of a cache hit, and an API's
/// calls go to the same URLs again and again (every caller of a coalesced flight builds the same one). A URL is kept
/// under what determines it: for a request without query items, its path as the caller wrote it (the base URL never
/// changes, so joining and escaping are skipped too); otherwise the URL's whole text. The two cannot be confused: a
/// relative path has no scheme, a URL's text always has one, and an absolute path is its own text.
///
/// Bounded: when it holds ``capacity`` URLs it starts over, so a client that calls ever-new URLs keeps at most that
/// many and pays one dictionary lookup per call for nothing. Each client has its own; what it holds is what its calls
/// sent, and only URLs that were accepted.
final class RecentURLs: Sendable {
    /// The most URLs kept.
    static let capacity = 256

    /// A URL and its normalized text (``RequestKey/normalize(_:)``), which the cache and the coalescing key use.
    struct Entry: Sendable {
        let url: URL
        let key: String

        init(_ url: URL) {
            self.url = url
            key = RequestKey.normalize(url)
        }
    }

    private let table = Locked([String: Entry]())

    /// The URL kept under `key`, if any.
    func url(for key: String) -> Entry? {
        table.withLock { $0[key] }
    }

    /// Keeps `entry` under `key`, starting over first when full.
    func remember(_ entry: Entry, as key: String) {
        table.withLock { table in
            if table.count >= Self.capacity { table.removeAll(keepingCapacity: true) }
            table[key] = entry
        }
    }

    /// How many URLs are kept (for tests).
    var count: Int { table.withLock { $0.count } }
}
