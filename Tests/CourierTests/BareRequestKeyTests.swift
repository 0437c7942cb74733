import Foundation
import Testing

@testable import Courier

/// A request with no header field, no body and no partition, that knows its normalized URL (as the client builds a
/// plain `GET`), is keyed by the request itself rather than by a copy of its parts. Such a key equals, and hashes as,
/// the key of an equal request keyed by its parts; and whatever a bare key leaves out (a header, a credential, a body,
/// a partition, the method) still tells keys apart.
@Suite struct BareRequestKeyTests {
    private static let text = "https://api.example.com/items?key=1"

    /// A request that knows its normalized URL, as the client builds it.
    private static func built(_ method: RequestMethod = .get, text: String = text) -> TransportRequest {
        var request = TransportRequest(method: method, url: URL(string: text)!)
        request.keepURLText(URLText(text))
        return request
    }

    /// A key sits in the frame of every caller that waits on a flight, whose frames fit one slab of task memory with a
    /// few bytes to spare: a hash stored beside the reference (16 bytes) took a joiner to a second slab, a malloc more.
    @Test func aKeyIsOneReference() {
        #expect(MemoryLayout<RequestKey>.size == MemoryLayout<AnyObject>.size)
        #expect(MemoryLayout<RequestKey?>.size == MemoryLayout<AnyObject>.size)
    }

    @Test func aBareKeyEqualsAndHashesAsTheKeyOfItsParts() {
        let bare = RequestKey(Self.built())
        // A request made from a `URL` does not know its normalized text: keyed by its parts.
        let parts = RequestKey(TransportRequest(url: URL(string: Self.text)!))
        #expect(bare == parts && parts == bare)
        #expect(bare.hashValue == parts.hashValue)
        #expect(Set([bare, parts]).count == 1)
        #expect(bare == RequestKey(Self.built()), "two requests built apart")
        #expect(bare.method == .get && bare.url == Self.text)
        #expect(bare.varyingHeaders.isEmpty && bare.body == nil && bare.partition == nil)
    }

    /// A bare key hashes from the request in place (``TransportRequest/methodAndURLHash``) and a table places keys by
    /// ``RequestKey/_rawHashValue(seed:)``: whatever the method, a bare key and the key of its parts land together.
    @Test(arguments: [RequestMethod.get, .head, .delete, "PURGE"])
    func aBareKeyIsFoundUnderTheKeyOfItsPartsWhateverTheMethod(_ method: RequestMethod) {
        let bare = RequestKey(Self.built(method))
        let parts = RequestKey(TransportRequest(method: method, url: URL(string: Self.text)!))
        #expect(bare == parts)
        #expect(bare.hashValue == parts.hashValue)
        #expect(bare._rawHashValue(seed: 42) == parts._rawHashValue(seed: 42))
        let table = [parts: "flight"]
        #expect(table[bare] == "flight")
    }

    @Test func whatABareKeyLeavesOutStillSplitsKeys() {
        let bare = RequestKey(Self.built())
        var withHeader = Self.built()
        withHeader.headers["Accept-Language"] = "fr"
        var withCredential = Self.built()
        withCredential.headers["Authorization"] = "Bearer alice"
        var withBody = Self.built()
        withBody.body = Data("x".utf8)
        let others = [
            RequestKey(withHeader), RequestKey(withCredential), RequestKey(withBody),
            RequestKey(Self.built(), partition: "alice"), RequestKey(Self.built(.head)),
            RequestKey(Self.built(text: "https://api.example.com/items?key=2")),
        ]
        for other in others {
            #expect(bare != other && other != bare, "\(other)")
        }
        #expect(Set(others + [bare]).count == others.count + 1)
        #expect(RequestKey(withHeader).varyingHeaders == ["accept-language: fr"])
    }

    @Test func aBareKeyRedactsTheCredentialsInItsURL() {
        let key = RequestKey(Self.built(text: "https://api.example.com/items?api_key=s3cret"))
        #expect(key.description == "GET https://api.example.com/items?api_key=<redacted>")
        #expect(!String(reflecting: key).contains("s3cret"))
        var dumped = ""
        dump(key, to: &dumped)
        #expect(!dumped.contains("s3cret"))
    }
}
