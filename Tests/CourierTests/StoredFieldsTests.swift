import Foundation
import Testing

@testable import Courier

/// The one pass over a response's fields reads what the lookups by name read, and the fields a cache never stores
/// are gone before it does.
@Suite struct StoredFieldsTests {
    private let headers: HeaderFields = HeaderFields([
        ("Date", "Mon, 23 Nov 2026 10:00:00 GMT"), ("cache-control", "max-age=60"), ("ETag", #""v1""#),
        ("Vary", "Accept, Accept-Language"), ("Cache-Control", "must-revalidate"), ("date", "second line"),
        ("AGE", "5"), ("Last-Modified", "Sun, 22 Nov 2026 10:00:00 GMT"), ("Expires", "0"),
        ("Content-Range", "bytes 0-9/100"), ("X-Other", "1"),
    ])

    @Test func eachFieldReadsAsItsLookupByName() {
        let fields = StoredFields(headers)
        #expect(fields.cacheControl == headers.values(for: "Cache-Control"))
        #expect(fields.age == headers.values(for: "Age"))
        #expect(fields.vary == headers.values(for: "Vary"))
        #expect(fields.varyNames == CachedResponse.listValues(headers, "Vary"))
        #expect(fields.date == headers["Date"] && fields.date == "Mon, 23 Nov 2026 10:00:00 GMT, second line")
        #expect(fields.lastModified == headers["Last-Modified"])
        #expect(fields.expires == headers["Expires"])
        #expect(fields.etag == headers["ETag"])
        #expect(fields.contentRange == headers["Content-Range"])
        #expect(StoredFields(HeaderFields()).date == nil)
    }

    @Test func fieldsNeverStoredAndThoseConnectionNamesAreRemovedInOrder() {
        let received = HeaderFields([
            ("Connection", "close, X-Hop"), ("X-Hop", "1"), ("Set-Cookie", "a=b"), ("Content-Type", "text/plain"),
            ("x-hop", "2"), ("Keep-Alive", "timeout=5"), ("ETag", #""v2""#),
        ])
        let stored = CachedResponse.storedHeaders(received)
        #expect(stored.map(\.name) == ["Content-Type", "ETag"])
        let untouched: HeaderFields = ["Content-Type": "text/plain"]
        #expect(CachedResponse.storedHeaders(untouched) == untouched)
    }

    /// `Connection: keep-alive` alone skips listing the names; any other member is still honoured.
    @Test(arguments: [
        ("keep-alive", ["Content-Type", "X-Hop"]), (" Keep-Alive\t", ["Content-Type", "X-Hop"]),
        ("keep-alive, X-Hop", ["Content-Type"]), ("keep-alivex", ["Content-Type", "X-Hop"]),
        ("X-HOP", ["Content-Type"]),
    ])
    func aConnectionOfKeepAliveAloneRemovesOnlyTheNeverStoredFields(connection: String, kept: [String]) {
        let received = HeaderFields([
            ("Connection", connection), ("Content-Type", "text/plain"), ("Keep-Alive", "timeout=5"), ("X-Hop", "1"),
        ])
        #expect(CachedResponse.storedHeaders(received).map(\.name) == kept)
    }

    @Test func trimmingReturnsAStringWithoutOptionalWhitespaceAtEitherEnd() {
        #expect(#""v1""#.trimmingOptionalWhitespace == #""v1""#)
        #expect(" \t\"v1\" \t".trimmingOptionalWhitespace == #""v1""#)
        #expect("\t".trimmingOptionalWhitespace == "")
        #expect("".trimmingOptionalWhitespace == "")
        #expect("a b".trimmingOptionalWhitespace == "a b")
        #expect("a ".trimmingOptionalWhitespace == "a")
    }
}
