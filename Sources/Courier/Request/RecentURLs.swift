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
    ///
    /// A class: a call reads an entry out of the table and drops it, and as a struct of five fields that retained and
    /// released each of them.
    final class Entry: Sendable {
        let url: URL
        /// The URL's normalized text, with its hash.
        let text: URLText
        /// What the entry is kept under: the path as the caller wrote it, or the URL's whole text.
        let storedAs: String
        /// The request a plain `GET` of this URL built, once one was sent; see ``PlainGET``.
        let plainGET: PlainGET?

        /// - Parameter normalizedText: The URL's normalized text when the caller knows it already; `nil` to
        ///   normalize it here.
        convenience init(_ url: URL, normalizedText: String? = nil, storedAs: String) {
            self.init(
                url: url, text: URLText(normalizedText ?? RequestKey.normalize(url)), storedAs: storedAs,
                plainGET: nil)
        }

        private init(url: URL, text: URLText, storedAs: String, plainGET: PlainGET?) {
            self.url = url
            self.text = text
            self.storedAs = storedAs
            self.plainGET = plainGET
        }

        /// The same entry with `plainGET` kept beside it.
        func keeping(_ plainGET: PlainGET) -> Entry {
            Entry(url: url, text: text, storedAs: storedAs, plainGET: plainGET)
        }
    }

    /// The request a `GET` with no headers, body or redirect policy of its own builds for a URL, with its coalescing
    /// key. Such a request depends on nothing but the URL and the client, so a URL called again reuses both: an API's
    /// reads repeat, and every joiner of a flight asks for the same request. Building them again cost about 2,500
    /// instructions and an allocation per call.
    struct PlainGET: Sendable {
        let request: TransportRequest
        /// Whether the URL's origin may receive the client's credentials.
        let isTrusted: Bool
        /// The request's coalescing key without a partition (``RequestKey/init(_:varyingOn:partition:)``).
        let sharingKey: RequestKey
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

    /// Keeps the plain `GET` built for `entry`'s URL beside it, unless the entry was dropped meanwhile.
    func keep(_ plainGET: PlainGET, for entry: Entry) {
        table.withLock { table in
            guard let index = table.index(forKey: entry.storedAs), table.values[index] === entry else { return }
            table.values[index] = entry.keeping(plainGET)
        }
    }

    /// How many URLs are kept (for tests).
    var count: Int { table.withLock { $0.count } }
}
