/// A URL's normalized text (``RequestKey/normalize(_:)``) with its hash, computed once when the client first builds
/// the URL: the cache's index is keyed by it, and hashing a URL's bytes again on every lookup cost about 300
/// instructions of a cache hit.
struct URLText: Hashable, Sendable {
    let text: String
    /// `text`'s hash value, which is per process: never stored or sent.
    private let hash: Int

    /// `text`'s hash value, as computed once (per process; never stored or sent).
    var precomputedHash: Int { hash }

    init(_ text: String) {
        self.text = text
        hash = text.hashValue
    }

    static func == (lhs: URLText, rhs: URLText) -> Bool {
        lhs.hash == rhs.hash && lhs.text == rhs.text
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }
}
