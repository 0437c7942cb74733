import Foundation

/// The URLs a client built lately, so that a URL called again is neither built nor parsed again.
///
/// `URL(string:)` costs about 3,400 instructions and 3 allocations on Linux, a tenth of a cache hit, and an API's
/// calls go to the same URLs again and again (every caller of a coalesced flight builds the same one). A URL is kept
/// under what determines it: for a request without query items, its path as the caller wrote it (the base URL never
/// changes, so joining and escaping are skipped too); otherwise the URL's whole text, in a table of its own.
///
/// Bounded: when it holds ``capacity`` URLs it starts over, so a client that calls ever-new URLs keeps at most that
/// many and pays one dictionary lookup per call for nothing. Each client has its own; what it holds is what its calls
/// sent, and only URLs that were accepted.
final class RecentURLs: Sendable {
    /// The most URLs kept.
    static let capacity = 256

    /// What an entry is kept under: for a request without query items, its path as the caller wrote it; otherwise
    /// the URL's whole text, with its hash, computed once for the lookup, the entry and its key.
    enum Key: Sendable {
        case path(String)
        case text(URLText)
    }

    /// A URL and its normalized text (``RequestKey/normalize(_:)``), which the cache and the coalescing key use.
    ///
    /// A class: a call reads an entry out of the table and drops it, and as a struct of five fields that retained and
    /// released each of them.
    final class Entry: Sendable {
        let url: URL
        /// The URL's normalized text, with its hash.
        let text: URLText
        /// What the entry is kept under.
        let key: Key
        /// The request a plain `GET` of this URL built, once one was sent; see ``PlainGET``.
        let plainGET: PlainGET?

        /// - Parameter normalizedText: The URL's normalized text when the caller knows it already; `nil` to
        ///   normalize it here.
        convenience init(_ url: URL, normalizedText: URLText? = nil, key: Key) {
            self.init(
                url: url, text: normalizedText ?? URLText(RequestKey.normalize(url)), key: key, plainGET: nil)
        }

        private init(url: URL, text: URLText, key: Key, plainGET: PlainGET?) {
            self.url = url
            self.text = text
            self.key = key
            self.plainGET = plainGET
        }

        /// The same entry with `plainGET` kept beside it.
        func keeping(_ plainGET: PlainGET) -> Entry {
            Entry(url: url, text: text, key: key, plainGET: plainGET)
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

    /// The two tables, one per kind of ``Key``: a path needs no hash of its own kept, and a URL's text is looked up
    /// under the hash its entry keeps.
    private struct Tables {
        var byPath: [String: Entry] = [:]
        var byText: [URLText: Entry] = [:]

        var count: Int { byPath.count + byText.count }
    }

    private let tables = Locked(Tables())

    /// The URL kept under `path`, if any.
    func url(forPath path: String) -> Entry? {
        tables.withLock { $0.byPath[path] }
    }

    /// The URL kept under `text`, if any.
    func url(forText text: URLText) -> Entry? {
        tables.withLock { $0.byText[text] }
    }

    /// Keeps `entry` under its key, starting over first when full.
    func remember(_ entry: Entry) {
        tables.withLock { tables in
            if tables.count >= Self.capacity {
                tables.byPath.removeAll(keepingCapacity: true)
                tables.byText.removeAll(keepingCapacity: true)
            }
            switch entry.key {
            case .path(let path): tables.byPath[path] = entry
            case .text(let text): tables.byText[text] = entry
            }
        }
    }

    /// Keeps the plain `GET` built for `entry`'s URL beside it, unless the entry was dropped meanwhile.
    func keep(_ plainGET: PlainGET, for entry: Entry) {
        tables.withLock { tables in
            switch entry.key {
            case .path(let path):
                guard let index = tables.byPath.index(forKey: path), tables.byPath.values[index] === entry else {
                    return
                }
                tables.byPath.values[index] = entry.keeping(plainGET)
            case .text(let text):
                guard let index = tables.byText.index(forKey: text), tables.byText.values[index] === entry else {
                    return
                }
                tables.byText.values[index] = entry.keeping(plainGET)
            }
        }
    }

    /// How many URLs are kept (for tests).
    var count: Int { tables.withLock { $0.count } }
}
