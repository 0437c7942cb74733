import Foundation
import Testing

@testable import Courier

/// A stored response's fields are filtered (hop-by-hop, per-recipient, credential and `Connection`-listed fields left
/// out) and the fields it is read by gathered in one pass: the result is what filtering first and gathering after
/// gives, whatever is removed and wherever it is.
@Suite struct StoredFieldsOnePassTests {
    private static let lists: [HeaderFields] = [
        ["Date": "Thu, 26 Nov 2026 13:00:00 GMT", "ETag": "\"a\"", "Content-Type": "application/json"],
        [
            "Server": "nginx", "Date": "Thu, 26 Nov 2026 13:00:00 GMT",
            "Last-Modified": "Thu, 26 Nov 2026 12:00:00 GMT",
            "Connection": "keep-alive", "ETag": "\"6745f0a0-dd\"", "Accept-Ranges": "bytes",
        ],
        ["Set-Cookie": "id=1", "Cache-Control": "max-age=60", "Age": "3", "Vary": "Accept", "Vary": "Accept-Language"],
        // `Connection` lists fields to remove, before and after it.
        [
            "Expires": "0", "Connection": "close, expires, x-trace", "X-Trace": "t",
            "Date": "Thu, 26 Nov 2026 13:00:00 GMT",
        ],
        ["ETag": "\"b\"", "Connection": " Keep-Alive ", "Keep-Alive": "timeout=5", "Transfer-Encoding": "chunked"],
        ["Connection": "etag", "ETag": "\"c\"", "Content-Range": "bytes 0-1/2"],
        // A credential the server hands out, by the policy's name.
        ["X-Auth-Token": "s3", "Date": "Thu, 26 Nov 2026 13:00:00 GMT", "Date": "Fri, 27 Nov 2026 13:00:00 GMT"],
        [:],
    ]

    @Test(arguments: lists)
    func onePassGivesWhatFilteringThenGatheringGives(_ headers: HeaderFields) {
        var credentials = CredentialPolicy.standard
        credentials.headerNames.insert("x-auth-token")
        let received = TransportResponse(statusCode: 200, headers: headers, body: Data("body".utf8))
        let gathered = StoredFields.gathered(received, credentials: credentials)
        let expected = CachedResponse.storedHeaders(headers, credentials: credentials)
        let kept = gathered.received.headers.fields.indices.filter { gathered.removed & (1 << UInt64($0)) == 0 }
        #expect(HeaderFields(fields: kept.map { gathered.received.headers.fields[$0] }) == expected)
        #expect(gathered.headerBytes == expected.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count })
        let fields = gathered.fields
        let expectedFields = StoredFields(expected)
        #expect(fields.cacheControl == expectedFields.cacheControl)
        #expect(fields.age == expectedFields.age)
        #expect(fields.vary == expectedFields.vary)
        #expect(fields.date == expectedFields.date)
        #expect(fields.lastModified == expectedFields.lastModified)
        #expect(fields.expires == expectedFields.expires)
        #expect(fields.etag == expectedFields.etag)
        #expect(fields.contentRange == expectedFields.contentRange)
    }

    /// A field the stored response is read by is left out, and not read, when the policy names it a credential.
    @Test func aReadFieldThatIsACredentialIsNeitherStoredNorRead() {
        var credentials = CredentialPolicy.standard
        credentials.headerNames.insert("etag")
        let headers: HeaderFields = ["ETag": "\"secret\"", "Date": "Thu, 26 Nov 2026 13:00:00 GMT"]
        let gathered = StoredFields.gathered(
            TransportResponse(statusCode: 200, headers: headers), credentials: credentials)
        #expect(gathered.removed == 0)  // A credential is not held: the response is filtered.
        #expect(gathered.received.headers.map(\.name) == ["Date"])
        #expect(gathered.fields.etag == nil)
        #expect(gathered.fields.date == "Thu, 26 Nov 2026 13:00:00 GMT")
        #expect(gathered.headerBytes == "Date".utf8.count + "Thu, 26 Nov 2026 13:00:00 GMT".utf8.count)
    }

    @Test func whatConnectionListsIsNeitherStoredNorRead() {
        let headers: HeaderFields = ["Expires": "0", "Connection": "expires", "ETag": "\"a\""]
        let gathered = StoredFields.gathered(
            TransportResponse(statusCode: 200, headers: headers), credentials: .standard)
        #expect(gathered.received.headers == ["ETag": "\"a\""])
        #expect(gathered.removed == 0)
        #expect(gathered.fields.expires == nil)
        #expect(gathered.fields.etag == "\"a\"")
    }
}
