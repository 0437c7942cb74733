import Foundation
import Testing

@testable import Courier

private typealias S = CachingScenario
private typealias E = CachingScenario.Expect

private let tag = #""a""#
private let modified = TestDate.http(-1000)
private func at(_ offset: TimeInterval) -> String { TestDate.http(offset) }

/// The caching table: RFC 9111 freshness and validation, request and response directives, `Vary`, `304` updates,
/// invalidation and every `CachePolicy`, each row checked through `APIClient` with a controllable date.
@Suite struct CachingScenarioTests {
    fileprivate static let freshness: [S] = [
        S(
            name: "max-age: fresh within the lifetime", first: ["Cache-Control": "max-age=60"], elapsed: 30,
            expect: .cached),
        S(
            name: "max-age: stale at exactly the lifetime, no validator", first: ["Cache-Control": "max-age=60"],
            elapsed: 60, expect: .network),
        S(
            name: "max-age: stale with ETag sends If-None-Match", first: ["Cache-Control": "max-age=60", "ETag": tag],
            elapsed: 61, expect: .revalidated(etag: tag)),
        S(
            name: "max-age: stale with Last-Modified sends If-Modified-Since",
            first: ["Cache-Control": "max-age=60", "Last-Modified": modified], elapsed: 61,
            expect: .revalidated(since: modified)),
        S(
            name: "ETag wins over Last-Modified",
            first: ["Cache-Control": "max-age=60", "ETag": tag, "Last-Modified": modified],
            elapsed: 61, expect: .revalidated(etag: tag)),
        S(
            name: "weak ETag is sent as is", first: ["Cache-Control": "max-age=60", "ETag": #"W/"w""#], elapsed: 61,
            expect: .revalidated(etag: #"W/"w""#)),
        S(
            name: "max-age=0 revalidates at once", first: ["Cache-Control": "max-age=0", "ETag": tag], elapsed: 0,
            expect: .revalidated(etag: tag)),
        S(name: "Expires − Date: fresh", first: ["Expires": at(100)], elapsed: 50, expect: .cached),
        S(
            name: "Expires − Date: stale", first: ["Expires": at(100), "ETag": tag], elapsed: 150,
            expect: .revalidated(etag: tag)),
        S(
            name: "Expires 0 is already expired", first: ["Expires": "0", "ETag": tag], elapsed: 0,
            expect: .revalidated(etag: tag)),
        S(
            name: "unparseable Expires is already expired", first: ["Expires": "tomorrow", "ETag": tag], elapsed: 0,
            expect: .revalidated(etag: tag)),
        S(
            name: "Expires in the past", first: ["Expires": at(-10), "ETag": tag], elapsed: 0,
            expect: .revalidated(etag: tag)),
        S(
            name: "max-age overrides Expires", first: ["Expires": at(-10), "Cache-Control": "max-age=60"], elapsed: 30,
            expect: .cached),
        S(
            name: "Expires without Date uses the response time", first: ["Expires": at(100), "Date": "-"], elapsed: 50,
            expect: .cached),
        S(
            name: "unparseable Date uses the response time",
            first: ["Cache-Control": "max-age=60", "Date": "yesterday"],
            elapsed: 30, expect: .cached),
        S(
            name: "Date in the past adds apparent age: still fresh",
            first: ["Cache-Control": "max-age=60", "Date": at(-30)], elapsed: 20, expect: .cached),
        S(
            name: "Date in the past adds apparent age: stale",
            first: ["Cache-Control": "max-age=60", "Date": at(-30), "ETag": tag], elapsed: 40,
            expect: .revalidated(etag: tag)),
        S(
            name: "Date in the future gives no negative age", first: ["Cache-Control": "max-age=60", "Date": at(100)],
            elapsed: 30, expect: .cached),
        S(
            name: "Age counts toward the current age: fresh", first: ["Cache-Control": "max-age=60", "Age": "50"],
            elapsed: 5, expect: .cached),
        S(
            name: "Age counts toward the current age: stale",
            first: ["Cache-Control": "max-age=60", "Age": "50", "ETag": tag],
            elapsed: 15, expect: .revalidated(etag: tag)),
        S(
            name: "negative Age is ignored", first: ["Cache-Control": "max-age=60", "Age": "-5"], elapsed: 30,
            expect: .cached),
        S(
            name: "garbage Age is ignored", first: ["Cache-Control": "max-age=60", "Age": "abc"], elapsed: 30,
            expect: .cached),
        S(
            name: "a list in Age counts its first value", first: ["Cache-Control": "max-age=60", "Age": "10, 20"],
            elapsed: 55, expect: .network),
        S(
            name: "huge Age saturates and is stale",
            first: ["Cache-Control": "max-age=60", "Age": "99999999999999999999999"],
            elapsed: 0, expect: .network),
        S(
            name: "corrected initial age adds the response delay: fresh",
            first: ["Cache-Control": "max-age=60", "Age": "10"], firstDelay: 20, elapsed: 25, expect: .cached),
        S(
            name: "corrected initial age adds the response delay: stale",
            first: ["Cache-Control": "max-age=60", "Age": "10", "ETag": tag], firstDelay: 20, elapsed: 35,
            expect: .revalidated(etag: tag)),
        S(
            name: "corrected initial age takes the larger of apparent age and Age",
            first: ["Cache-Control": "max-age=60", "Age": "10", "Date": at(-40), "ETag": tag], elapsed: 25,
            expect: .revalidated(etag: tag)),
        S(
            name: "heuristic: 10% of Date − Last-Modified, fresh", first: ["Last-Modified": modified], elapsed: 50,
            expect: .cached),
        S(
            name: "heuristic: 10% of Date − Last-Modified, stale", first: ["Last-Modified": modified], elapsed: 150,
            expect: .revalidated(since: modified)),
        S(
            name: "heuristic applies to 404", first: ["Last-Modified": modified], firstStatus: 404, elapsed: 50,
            expect: .cached),
        S(
            name: "no heuristic for 302: not stored", first: ["Last-Modified": modified], firstStatus: 302, elapsed: 50,
            expect: .network),
        S(
            name: "no heuristic when Expires is present", first: ["Expires": at(0), "Last-Modified": modified],
            elapsed: 10,
            expect: .revalidated(since: modified)),
        S(
            name: "no heuristic when Last-Modified is after Date", first: ["Last-Modified": at(500)], elapsed: 1,
            expect: .revalidated(since: at(500))),
        S(
            name: "unparseable Last-Modified is no validator", first: ["Last-Modified": "last week"], elapsed: 1,
            expect: .network),
        S(name: "no caching headers: not stored", first: [:], elapsed: 1, expect: .network),
        S(
            name: "301 with max-age is served", first: ["Cache-Control": "max-age=60"], firstStatus: 301, elapsed: 10,
            expect: .cached),
        S(
            name: "302 with max-age is served", first: ["Cache-Control": "max-age=60"], firstStatus: 302, elapsed: 10,
            expect: .cached),
        S(
            name: "204 with max-age is served", first: ["Cache-Control": "max-age=60"], firstStatus: 204, elapsed: 10,
            expect: .cached),
        S(
            name: "500 with max-age is served", first: ["Cache-Control": "max-age=60"], firstStatus: 500, elapsed: 10,
            expect: .cached),
        S(
            name: "500 without explicit freshness is not stored", first: ["Last-Modified": modified],
            firstStatus: 500, elapsed: 10, expect: .network),
    ]

    fileprivate static let requestDirectives: [S] = [
        S(
            name: "request no-cache revalidates a fresh entry", first: ["Cache-Control": "max-age=60", "ETag": tag],
            elapsed: 10, second: ["Cache-Control": "no-cache"], expect: .revalidated(etag: tag)),
        S(
            name: "request no-cache without validator reloads", first: ["Cache-Control": "max-age=60"], elapsed: 10,
            second: ["Cache-Control": "no-cache"], expect: .network),
        S(
            name: "Pragma: no-cache acts as no-cache", first: ["Cache-Control": "max-age=60", "ETag": tag], elapsed: 10,
            second: ["Pragma": "no-cache"], expect: .revalidated(etag: tag)),
        S(
            name: "Pragma is ignored when Cache-Control is present",
            first: ["Cache-Control": "max-age=60", "ETag": tag],
            elapsed: 10, second: ["Pragma": "no-cache", "Cache-Control": "max-stale"], expect: .cached),
        S(
            name: "request max-age younger than the entry revalidates",
            first: ["Cache-Control": "max-age=60", "ETag": tag], elapsed: 10, second: ["Cache-Control": "max-age=5"],
            expect: .revalidated(etag: tag)),
        S(
            name: "request max-age older than the entry is served", first: ["Cache-Control": "max-age=60"], elapsed: 10,
            second: ["Cache-Control": "max-age=20"], expect: .cached),
        S(
            name: "request min-fresh not met revalidates", first: ["Cache-Control": "max-age=60", "ETag": tag],
            elapsed: 40,
            second: ["Cache-Control": "min-fresh=30"], expect: .revalidated(etag: tag)),
        S(
            name: "request min-fresh met is served", first: ["Cache-Control": "max-age=60"], elapsed: 40,
            second: ["Cache-Control": "min-fresh=10"], expect: .cached),
        S(
            name: "request max-stale accepts any staleness", first: ["Cache-Control": "max-age=60"], elapsed: 1000,
            second: ["Cache-Control": "max-stale"], expect: .cached),
        S(
            name: "request max-stale=30 accepts 20 s stale", first: ["Cache-Control": "max-age=60"], elapsed: 80,
            second: ["Cache-Control": "max-stale=30"], expect: .cached),
        S(
            name: "request max-stale=10 refuses 20 s stale", first: ["Cache-Control": "max-age=60", "ETag": tag],
            elapsed: 80, second: ["Cache-Control": "max-stale=10"], expect: .revalidated(etag: tag)),
        S(
            name: "max-stale never overrides must-revalidate",
            first: ["Cache-Control": "max-age=60, must-revalidate", "ETag": tag], elapsed: 80,
            second: ["Cache-Control": "max-stale"], expect: .revalidated(etag: tag)),
        S(
            name: "only-if-cached serves a fresh entry", first: ["Cache-Control": "max-age=60"], elapsed: 10,
            second: ["Cache-Control": "only-if-cached"], expect: .cached),
        S(
            name: "only-if-cached with a stale entry fails without sending",
            first: ["Cache-Control": "max-age=60", "ETag": tag], elapsed: 100,
            second: ["Cache-Control": "only-if-cached"], expect: .notCached),
        S(
            name: "only-if-cached with max-stale serves a stale entry", first: ["Cache-Control": "max-age=60"],
            elapsed: 100, second: ["Cache-Control": "only-if-cached, max-stale"], expect: .cached),
        S(
            name: "request no-store may still be served", first: ["Cache-Control": "max-age=60"], elapsed: 10,
            second: ["Cache-Control": "no-store"], expect: .cached),
        S(
            name: "first request no-store keeps the response out", first: ["Cache-Control": "max-age=60"],
            firstRequest: ["Cache-Control": "no-store"], elapsed: 10, expect: .network),
        S(
            name: "garbage request Cache-Control is ignored", first: ["Cache-Control": "max-age=60"], elapsed: 10,
            second: ["Cache-Control": "%%%, =, ,,x-unknown=\"q"], expect: .cached),
        S(
            name: "an invalid request max-age counts as 0", first: ["Cache-Control": "max-age=60"], elapsed: 10,
            second: ["Cache-Control": #"max-age="unterminated"#], expect: .network),
    ]

    fileprivate static let responseDirectives: [S] = [
        S(
            name: "response no-store is never stored", first: ["Cache-Control": "no-store, max-age=60"], elapsed: 10,
            expect: .network),
        S(
            name: "response no-cache revalidates even when fresh",
            first: ["Cache-Control": "no-cache, max-age=60", "ETag": tag], elapsed: 10, expect: .revalidated(etag: tag)),
        S(
            name: "qualified no-cache revalidates like no-cache",
            first: ["Cache-Control": #"no-cache="Set-Cookie", max-age=60"#, "ETag": tag], elapsed: 10,
            expect: .revalidated(etag: tag)),
        S(
            name: "response no-cache without validator reloads", first: ["Cache-Control": "no-cache, max-age=60"],
            elapsed: 10, expect: .network),
        S(
            name: "private is stored by a private cache", first: ["Cache-Control": "private, max-age=60"], elapsed: 10,
            expect: .cached),
        S(
            name: "s-maxage is ignored by a private cache", first: ["Cache-Control": "s-maxage=600", "ETag": tag],
            elapsed: 10, expect: .revalidated(etag: tag)),
        S(
            name: "invalid max-age is stale", first: ["Cache-Control": "max-age=abc", "ETag": tag], elapsed: 0,
            expect: .revalidated(etag: tag)),
        S(
            name: "conflicting max-age takes the smallest",
            first: ["Cache-Control": "max-age=60, max-age=10", "ETag": tag],
            elapsed: 30, expect: .revalidated(etag: tag)),
        S(
            name: "garbage Cache-Control with a valid max-age", first: ["Cache-Control": #"@@, max-age=60, "x"#],
            elapsed: 30, expect: .cached),
        S(
            name: "must-revalidate beats stale-while-revalidate",
            first: ["Cache-Control": "max-age=60, must-revalidate, stale-while-revalidate=100", "ETag": tag],
            elapsed: 70,
            expect: .revalidated(etag: tag)),
        S(
            name: "immutable fresh entry survives a reload",
            first: ["Cache-Control": "max-age=60, immutable", "ETag": tag],
            elapsed: 10, second: ["Cache-Control": "no-cache"], expect: .cached),
        S(
            name: "immutable stale entry revalidates", first: ["Cache-Control": "max-age=60, immutable", "ETag": tag],
            elapsed: 70, expect: .revalidated(etag: tag)),
        S(
            name: "stale-while-revalidate serves stale and refreshes in the background",
            first: ["Cache-Control": "max-age=60, stale-while-revalidate=30", "ETag": tag], elapsed: 70,
            expect: .staleWhileRevalidate(etag: tag)),
        S(
            name: "past the stale-while-revalidate window revalidates first",
            first: ["Cache-Control": "max-age=60, stale-while-revalidate=30", "ETag": tag], elapsed: 100,
            expect: .revalidated(etag: tag)),
        S(
            name: "stale-if-error serves stale on a 500",
            first: ["Cache-Control": "max-age=60, stale-if-error=100", "ETag": tag], elapsed: 70, reply: .status(500),
            expect: E(called: true, ifNoneMatch: tag, source: .cache)),
        S(
            name: "stale-if-error serves stale on a transport failure",
            first: ["Cache-Control": "max-age=60, stale-if-error=100", "ETag": tag], elapsed: 70,
            reply: .transportFailure,
            expect: E(called: true, ifNoneMatch: tag, source: .cache)),
        S(
            name: "past the stale-if-error window the 500 passes through",
            first: ["Cache-Control": "max-age=60, stale-if-error=5", "ETag": tag], elapsed: 70, reply: .status(500),
            expect: E(called: true, ifNoneMatch: tag, source: .network, body: "boom")),
        S(
            name: "must-revalidate beats stale-if-error",
            first: ["Cache-Control": "max-age=60, must-revalidate, stale-if-error=100", "ETag": tag], elapsed: 70,
            reply: .status(503), expect: E(called: true, ifNoneMatch: tag, source: .network, body: "boom")),
    ]

    fileprivate static let validationAndVary: [S] = [
        S(
            name: "304 replaces stored header fields",
            first: ["Cache-Control": "max-age=60", "ETag": tag, "X-Version": "1"],
            elapsed: 70, reply: .notModified(["X-Version": "2"]),
            expect: E(
                called: true, ifNoneMatch: tag, source: .revalidated, header: .init(name: "X-Version", value: "2"))),
        S(
            name: "304 keeps the stored Content-Length",
            first: ["Cache-Control": "max-age=60", "ETag": tag, "Content-Length": "2"], elapsed: 70,
            reply: .notModified(["Content-Length": "0"]),
            expect: E(
                called: true, ifNoneMatch: tag, source: .revalidated, header: .init(name: "Content-Length", value: "2"))
        ),
        S(
            name: "caller's If-None-Match passes through", first: ["Cache-Control": "max-age=60", "ETag": tag],
            elapsed: 10,
            second: ["If-None-Match": #""mine""#],
            expect: E(called: true, ifNoneMatch: #""mine""#, source: .network, body: "")),
        S(
            name: "caller's If-Modified-Since passes through", first: ["Cache-Control": "max-age=60"], elapsed: 10,
            second: ["If-Modified-Since": modified],
            expect: E(called: true, ifModifiedSince: modified, source: .network, body: "")),
        S(
            name: "a Range request is answered from the stored response", first: ["Cache-Control": "max-age=60"],
            elapsed: 10, second: ["Range": "bytes=0-1"],
            expect: E(called: false, source: .cache, header: .init(name: "Content-Range", value: "bytes 0-1/2"))),
        S(
            name: "an If-Range request bypasses the cache", first: ["Cache-Control": "max-age=60"], elapsed: 10,
            second: ["Range": "bytes=0-1", "If-Range": modified], expect: .network),
        S(
            name: "HEAD is not answered from a stored GET", first: ["Cache-Control": "max-age=60"], elapsed: 10,
            secondMethod: .head, expect: .network),
        S(
            name: "Vary: same header value is served", first: ["Cache-Control": "max-age=60", "Vary": "Accept"],
            firstRequest: ["Accept": "text/plain"], elapsed: 10, second: ["Accept": "text/plain"], expect: .cached),
        S(
            name: "Vary: another header value is a miss", first: ["Cache-Control": "max-age=60", "Vary": "Accept"],
            firstRequest: ["Accept": "text/plain"], elapsed: 10, second: ["Accept": "text/html"], expect: .network),
        S(
            name: "Vary: absent in both requests matches",
            first: ["Cache-Control": "max-age=60", "Vary": "Accept-Language"],
            elapsed: 10, expect: .cached),
        S(
            name: "Vary: present only later is a miss",
            first: ["Cache-Control": "max-age=60", "Vary": "Accept-Language"],
            elapsed: 10, second: ["Accept-Language": "fr"], expect: .network),
        S(
            name: "Vary names are case-insensitive",
            first: ["Cache-Control": "max-age=60", "Vary": "ACCEPT, x-tenant"],
            firstRequest: ["accept": "a", "X-Tenant": "t"], elapsed: 10, second: ["Accept": "a", "x-tenant": "t"],
            expect: .cached),
        S(
            name: "Vary: * is never stored", first: ["Cache-Control": "max-age=60", "Vary": "*"], elapsed: 10,
            expect: .network),
        S(
            name: "different Authorization is another partition", first: ["Cache-Control": "max-age=60"],
            firstRequest: ["Authorization": "Bearer alice"], elapsed: 10, second: ["Authorization": "Bearer bob"],
            expect: .network),
        S(
            name: "same Authorization is served", first: ["Cache-Control": "private, max-age=60"],
            firstRequest: ["Authorization": "Bearer alice"], elapsed: 10, second: ["Authorization": "Bearer alice"],
            expect: .cached),
    ]

    fileprivate static let invalidation: [S] = [
        S(
            name: "POST 201 invalidates the target", first: ["Cache-Control": "max-age=60"], elapsed: 1,
            between: .init(method: .post, path: "/r", status: 201), expect: .network),
        S(
            name: "PUT 200 invalidates the target", first: ["Cache-Control": "max-age=60"], elapsed: 1,
            between: .init(method: .put, path: "/r"), expect: .network),
        S(
            name: "PATCH 204 invalidates the target", first: ["Cache-Control": "max-age=60"], elapsed: 1,
            between: .init(method: .patch, path: "/r", status: 204), expect: .network),
        S(
            name: "DELETE 204 invalidates the target", first: ["Cache-Control": "max-age=60"], elapsed: 1,
            between: .init(method: .delete, path: "/r", status: 204), expect: .network),
        S(
            name: "a 303 to POST invalidates too", first: ["Cache-Control": "max-age=60"], elapsed: 1,
            between: .init(method: .post, path: "/r", status: 303), expect: .network),
        S(
            name: "an error response to POST does not invalidate", first: ["Cache-Control": "max-age=60"], elapsed: 1,
            between: .init(method: .post, path: "/r", status: 500), expect: .cached),
        S(
            name: "POST elsewhere leaves the entry", first: ["Cache-Control": "max-age=60"], elapsed: 1,
            between: .init(method: .post, path: "/other"), expect: .cached),
        S(
            name: "relative Location invalidates", first: ["Cache-Control": "max-age=60"], elapsed: 1,
            between: .init(method: .post, path: "/other", status: 201, headers: ["Location": "/r"]), expect: .network),
        S(
            name: "absolute same-origin Content-Location invalidates", first: ["Cache-Control": "max-age=60"],
            elapsed: 1,
            between: .init(method: .put, path: "/other", headers: ["Content-Location": "HTTP://API.test:80/r"]),
            expect: .network),
        S(
            name: "cross-origin Location does not invalidate", first: ["Cache-Control": "max-age=60"], elapsed: 1,
            between: .init(method: .post, path: "http://cdn.test/other", headers: ["Location": "http://api.test/r"]),
            expect: .cached),
    ]

    fileprivate static let policies: [S] = [
        S(
            name: "reloadIgnoringCache skips a fresh entry", first: ["Cache-Control": "max-age=60", "ETag": tag],
            elapsed: 10, policy: .reloadIgnoringCache, expect: .network),
        S(
            name: "reloadRevalidatingCache revalidates a fresh entry",
            first: ["Cache-Control": "max-age=60", "ETag": tag],
            elapsed: 10, policy: .reloadRevalidatingCache, expect: .revalidated(etag: tag)),
        S(
            name: "reloadRevalidatingCache overrides immutable",
            first: ["Cache-Control": "max-age=60, immutable", "ETag": tag], elapsed: 10,
            policy: .reloadRevalidatingCache,
            expect: .revalidated(etag: tag)),
        S(
            name: "reloadRevalidatingCache without validator reloads", first: ["Cache-Control": "max-age=60"],
            elapsed: 10, policy: .reloadRevalidatingCache, expect: .network),
        S(
            name: "returnCacheElseLoad serves a stale entry", first: ["Cache-Control": "max-age=60", "ETag": tag],
            elapsed: 1000, policy: .returnCacheElseLoad, expect: .cached),
        S(
            name: "returnCacheElseLoad loads when nothing is stored", first: ["Cache-Control": "no-store"], elapsed: 10,
            policy: .returnCacheElseLoad, expect: .network),
        S(
            name: "onlyIfCached serves a stale must-revalidate entry",
            first: ["Cache-Control": "max-age=60, must-revalidate"], elapsed: 1000, policy: .onlyIfCached,
            expect: .cached),
        S(
            name: "onlyIfCached fails when nothing is stored", first: [:], elapsed: 10, policy: .onlyIfCached,
            expect: .notCached),
        S(
            name: "staleWhileRevalidate policy serves stale and refreshes",
            first: ["Cache-Control": "max-age=60", "ETag": tag], elapsed: 1000, policy: .staleWhileRevalidate,
            expect: .staleWhileRevalidate(etag: tag)),
        S(
            name: "staleWhileRevalidate policy serves fresh without refreshing", first: ["Cache-Control": "max-age=60"],
            elapsed: 10, policy: .staleWhileRevalidate, expect: .cached),
        S(
            name: "staleWhileRevalidate policy still honours must-revalidate",
            first: ["Cache-Control": "max-age=60, must-revalidate", "ETag": tag], elapsed: 70,
            policy: .staleWhileRevalidate, expect: .revalidated(etag: tag)),
        S(
            name: "staleWhileRevalidate policy loads when nothing is stored", first: [:], elapsed: 10,
            policy: .staleWhileRevalidate, expect: .network),
    ]

    fileprivate static let all =
        freshness + requestDirectives + responseDirectives + validationAndVary + invalidation + policies

    @Test func theTableIsLargeAndNamesAreUnique() {
        #expect(Self.all.count >= 60)
        #expect(Set(Self.all.map(\.name)).count == Self.all.count)
    }

    @Test(arguments: all)
    func scenario(_ scenario: CachingScenario) async throws {
        try await scenario.run()
    }
}
