import Foundation
import Testing

@testable import Courier

/// The URL text is written in one pass; it must equal the text built piece by piece with Foundation's percent-encoding
/// of RFC 3986's unreserved set, for any name and value.
@Suite struct URLComposerTests {
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// What the composer must write, built the slow way.
    private static func expected(_ prefix: String, _ query: [URLQueryItem]) -> String {
        guard !query.isEmpty else { return prefix }
        let items = query.map { item in
            let name = item.name.addingPercentEncoding(withAllowedCharacters: unreserved)!
            return item.value.map { name + "=" + $0.addingPercentEncoding(withAllowedCharacters: unreserved)! } ?? name
        }
        return prefix + (prefix.contains("?") ? "&" : "?") + items.joined(separator: "&")
    }

    @Test(arguments: [
        ("https://h/v1", "/users", [URLQueryItem(name: "q", value: "a b&c=d/é")]),
        (
            "https://h/v1", "/search?page=2",
            [URLQueryItem(name: "flag", value: nil), URLQueryItem(name: "", value: "")]
        ),
        ("https://h", "", [URLQueryItem(name: "😀", value: "100%")]),
        ("https://h/a-long-base-path-of-more-than-fifteen-bytes", "/x", []),
    ])
    func itemsAreEscapedAndJoinedAfterThePath(base: String, path: String, query: [URLQueryItem]) {
        let text = URLComposer.joined(base, path, query: query)
        #expect(text == Self.expected(base + path, query))
    }

    @Test func anyTextRoundTripsThroughTheEscaping() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("aZ09-._~ !\"#$%&'()*+,/:;<=>?@[\\]^`{|}\u{7F}\u{0}é中😀")
        for _ in 0..<500 {
            let items = (0..<Int.random(in: 1...3, using: &generator)).map { _ in
                let name = String((0..<Int.random(in: 0...8, using: &generator)).map { _ in alphabet.randomElement()! })
                let value = String(
                    (0..<Int.random(in: 0...20, using: &generator)).map { _ in alphabet.randomElement()! })
                return URLQueryItem(name: name, value: Bool.random(using: &generator) ? value : nil)
            }
            let prefix = Bool.random(using: &generator) ? "http://h/p?x=1" : "http://h/p"
            #expect(URLComposer.joined(prefix, query: items) == Self.expected(prefix, items))
        }
    }

    @Test func textWithoutItemsIsReturnedAsItIs() {
        #expect(URLComposer.joined("https://h/v1", query: []) == "https://h/v1")
        #expect(URLComposer.joined("https://h/v1", "/", "users", query: []) == "https://h/v1/users")
    }
}

/// A URL built on a base in normal form takes its text as its key without a normalizing pass: the text must be what
/// that pass would give, for bases in normal form and not.
@Suite struct URLKeyTextTests {
    @Test(arguments: [
        "https://api.example.com/v1", "HTTPS://API.Example.com/v1", "http://h:80/v1", "https://h:443",
        "https://h:8443/v1?tenant=acme", "http://User@H/x/", "https://h/v1#top",
    ])
    func theKeyTextIsTheNormalizedURL(base: String) throws {
        let base = URLBuilder.Base(try #require(URL(string: base)))
        let paths = ["", "/users/42", "users", "/search?page=2", "?q=1", "/a%20b", "https://Other.example:443/x"]
        let queries = [[], [URLQueryItem(name: "q", value: "a b")], [URLQueryItem(name: "key", value: "7")]]
        for path in paths {
            for query in queries {
                let entry = try URLBuilder.target(base: base, path: path, query: query, recent: nil).entry
                #expect(entry.text.text == RequestKey.normalize(entry.url), "\(path) \(query)")
            }
        }
    }
}
