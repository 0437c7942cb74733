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
        let (stored, fields) = StoredFields.stored(headers, credentials: credentials)
        let expected = CachedResponse.storedHeaders(headers, credentials: credentials)
        #expect(stored == expected)
        let gathered = StoredFields(expected)
        #expect(fields.cacheControl == gathered.cacheControl)
        #expect(fields.age == gathered.age)
        #expect(fields.vary == gathered.vary)
        #expect(fields.date == gathered.date)
        #expect(fields.lastModified == gathered.lastModified)
        #expect(fields.expires == gathered.expires)
        #expect(fields.etag == gathered.etag)
        #expect(fields.contentRange == gathered.contentRange)
    }

    @Test func whatConnectionListsIsNeitherStoredNorRead() {
        let headers: HeaderFields = ["Expires": "0", "Connection": "expires", "ETag": "\"a\""]
        let (stored, fields) = StoredFields.stored(headers, credentials: .standard)
        #expect(stored == ["ETag": "\"a\""])
        #expect(fields.expires == nil)
        #expect(fields.etag == "\"a\"")
    }
}
