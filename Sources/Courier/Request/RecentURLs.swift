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
    ///
    /// A URL the client wrote itself on a base in normal form (a relative path, escaped, and query items, encoded) is
    /// kept as its text and parsed into a `URL` only when something reads ``url`` (a transport that sends through
    /// `URLSession`, a redirect, an error): the cache and the coalescing key read the text, and `URL(string:)` cost
    /// about 4,200 instructions and 3 allocations of a call to a new URL. The parsed URL is kept, so that every
    /// request built from the entry parses it at most once between them.
    final class Entry: Sendable {
        /// The URL, or the text it is parsed from when first read. Inline, so that an entry is one allocation in
        /// release builds (a `Locked` box was a second, and its generic deinit cost about 1,200 instructions per entry
        /// dropped); see ``InlineLock`` for debug builds.
        private let location: InlineLock<Location>
        /// The URL's normalized text, with its hash.
        let text: URLText
        /// What the entry is kept under.
        let key: Key
        /// The request a plain `GET` of this URL built, once one was sent; see ``PlainGET``.
        let plainGET: PlainGET?

        /// A URL as parsed, or as text still to be parsed.
        enum Location: Sendable {
            case parsed(URL)
            /// An absolute URL's text that `URL(string:)` accepts: built by the client from a base URL in normal
            /// form, an escaped path and encoded query items.
            case text(String)
        }

        /// - Parameter normalizedText: The URL's normalized text when the caller knows it already; `nil` to
        ///   normalize it here.
        convenience init(_ url: URL, normalizedText: URLText? = nil, key: Key) {
            self.init(
                location: .parsed(url), text: normalizedText ?? URLText(RequestKey.normalize(url)), key: key,
                plainGET: nil)
        }

        /// An entry for the URL whose text, in normal form, is `text`; parsed when ``url`` is first read.
        convenience init(unparsed text: URLText, key: Key) {
            self.init(location: .text(text.text), text: text, key: key, plainGET: nil)
        }

        private init(location: Location, text: URLText, key: Key, plainGET: PlainGET?) {
            self.location = InlineLock(location)
            self.text = text
            self.key = key
            self.plainGET = plainGET
        }

        /// The URL, parsed now if it was kept as text.
        var url: URL {
            location.withLock { location in
                switch location {
                case .parsed(let url):
                    return url
                case .text(let text):
                    // The text was written from parts that each parse (see `Location.text`); the fallback only keeps
                    // a mistake there from trapping.
                    let url = URL(string: text) ?? Self.invalid
                    location = .parsed(url)
                    return url
                }
            }
        }

        /// Whether ``url`` was parsed already (for tests).
        var isParsed: Bool {
            location.withLock { if case .parsed = $0 { true } else { false } }
        }

        /// What an unparsable text would read as: never reached, see ``url``.
        private static var invalid: URL { URL(fileURLWithPath: "/") }

        /// The same entry with `plainGET` kept beside it, and the URL as parsed so far.
        func keeping(_ plainGET: PlainGET) -> Entry {
            Entry(location: location.withLock { $0 }, text: text, key: key, plainGET: plainGET)
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
        /// The hashes of URLs with query items seen lately and not kept, one per slot (a slot's URL is the last one
        /// whose hash chose it); `0` marks an empty slot. A URL whose mark another overwrote is seen again as new,
        /// and one whose hash matches another's mark is kept a call early: either way only what is kept changes.
        var sightings = [Int](repeating: 0, count: RecentURLs.capacity)
        /// The entry a path last found, with its path: the next call of the same path (every joiner of a flight, a hot
        /// read) is answered by comparing the path, where the table hashed it (about 300 instructions of a joiner).
        /// Cleared whenever an entry is kept under a path, so it never answers with an entry the table replaced.
        var lastFound: (path: String, entry: Entry)?

        var count: Int { byPath.count + byText.count }

        /// `read` of the entry kept under `path`, which is then the last found; `nil` when none is. The entry is read
        /// in place: a binding of it (of the last one found too) retains it.
        @inline(__always)
        mutating func reading<Value>(_ path: String, _ read: (Entry) -> Value) -> Value? {
            if lastFound != nil, lastFound.unsafelyUnwrapped.path == path {
                return read(lastFound.unsafelyUnwrapped.entry)
            }
            guard let index = byPath.index(forKey: path) else { return nil }
            lastFound = (path, byPath.values[index])
            return read(byPath.values[index])
        }
    }

    private let tables = Locked(Tables())

    /// The URL kept under `path`, if any.
    func url(forPath path: String) -> Entry? {
        tables.withLock { $0.reading(path) { $0 } }
    }

    /// What a plain `GET` of `path` builds (``Entry/plainGET``), when its entry is kept and has it: read under the lock,
    /// without retaining the entry.
    func plainGET(forPath path: String) -> PlainGET? {
        tables.withLock { $0.reading(path) { $0.plainGET } } ?? nil
    }

    /// The URL kept under `text`, if any.
    func url(forText text: URLText) -> Entry? {
        tables.withLock { $0.byText[text] }
    }

    /// What ``sighting(of:)`` found.
    enum Sighting {
        /// The URL is kept: its entry.
        case kept(Entry)
        /// The URL was seen lately but not kept: it is kept from now on.
        case seenBefore
        /// The URL was not seen lately: it is marked as seen, and kept if it comes again.
        case new
    }

    /// The entry kept under `text`; otherwise whether it was seen lately, marking it as seen. A URL with query items is
    /// kept from its second call: a client that calls ever-new URLs (a new `?key=N` each time) then never pays for
    /// an entry it will not use.
    func sighting(of text: URLText) -> Sighting {
        tables.withLock { tables in
            if let entry = tables.byText[text] { return .kept(entry) }
            let mark = text.precomputedHash | 1
            let slot = Int(UInt(bitPattern: text.precomputedHash) % UInt(tables.sightings.count))
            guard tables.sightings[slot] != mark else { return .seenBefore }
            tables.sightings[slot] = mark
            return .new
        }
    }

    /// Keeps `entry` under its key, starting over first when full.
    func remember(_ entry: Entry) {
        tables.withLock { tables in
            if tables.count >= Self.capacity {
                tables.byPath.removeAll(keepingCapacity: true)
                tables.byText.removeAll(keepingCapacity: true)
                tables.lastFound = nil
            }
            switch entry.key {
            case .path(let path):
                tables.byPath[path] = entry
                tables.lastFound = nil
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
                tables.lastFound = nil
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
