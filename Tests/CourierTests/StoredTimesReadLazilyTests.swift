import Foundation
import Testing

@testable import Courier

/// A stored entry's `Date`, `Last-Modified`, `Expires` and `Age` are parsed when its age or freshness is first read,
/// not when it is stored (``CachedResponse/Timing``): what is read then, once or from many tasks at once, is what
/// RFC 9111 §4.2 makes of the fields.
@Suite struct StoredTimesReadLazilyTests {
    private static let url = URL(string: "https://api.test/items?key=1")!
    /// The `Date` below as a point in time.
    private static let date = Date(timeIntervalSince1970: 1_795_698_000)
    /// Sent one second before the response arrived, two minutes after its `Date`.
    private static let requestTime = date.addingTimeInterval(119)
    private static let responseTime = date.addingTimeInterval(120)

    /// A `200` without a lifetime of its own: `Date` one hour after `Last-Modified`, an `Age` of 30 seconds.
    private static func response(
        date: String = "Thu, 26 Nov 2026 13:00:00 GMT", lastModified: String = "Thu, 26 Nov 2026 12:00:00 GMT",
        extra: HeaderFields = [:]
    ) -> TransportResponse {
        var headers: HeaderFields = ["Date": date, "Last-Modified": lastModified, "ETag": "\"v1\"", "Age": "30"]
        for field in extra { headers[field.name] = field.value }
        return TransportResponse(statusCode: 200, headers: headers, body: Data("hello".utf8))
    }

    private static func entry(_ response: TransportResponse = response()) -> CachedResponse {
        CachedResponse(
            response: response, request: TransportRequest(url: url), requestTime: requestTime,
            responseTime: responseTime)
    }

    /// `corrected_initial_age` (§4.2.3): the larger of the apparent age (120) and `Age` plus the response delay (31).
    private static let correctedInitialAge: TimeInterval = 120

    @Test func theTimesReadAfterStoringAreWhatTheFieldsSay() {
        let entry = Self.entry()
        #expect(entry.freshnessLifetime == 360)  // a tenth of Date − Last-Modified (§4.2.2)
        #expect(entry.isHeuristic)
        #expect(entry.lastModified == "Thu, 26 Nov 2026 12:00:00 GMT")
        #expect(entry.age(at: Self.responseTime) == Self.correctedInitialAge)
        #expect(entry.age(at: Self.responseTime.addingTimeInterval(10)) == Self.correctedInitialAge + 10)
        #expect(entry.isFresh(at: Self.responseTime.addingTimeInterval(239)))
        #expect(!entry.isFresh(at: Self.responseTime.addingTimeInterval(240)))
    }

    @Test func anExpiresIsParsedWhenRead() {
        let expiring = Self.entry(Self.response(extra: ["Expires": "Thu, 26 Nov 2026 14:00:00 GMT"]))
        #expect(expiring.freshnessLifetime == 3_600 && !expiring.isHeuristic)
        // §4.2.1: an invalid Expires is a time in the past.
        let expired = Self.entry(Self.response(extra: ["Expires": "0"]))
        #expect(expired.freshnessLifetime == 0 && !expired.isHeuristic)
    }

    @Test func aLastModifiedThatIsNoDateIsNoValidatorAndGivesNoHeuristic() {
        let entry = Self.entry(Self.response(lastModified: "yesterday"))
        #expect(entry.lastModified == nil)
        #expect(entry.freshnessLifetime == 0 && !entry.isHeuristic)
        #expect(entry.etag == "\"v1\"")
    }

    /// Without a `Date` the time the response arrived stands in for it (RFC 9110 §6.6.1).
    @Test func aMissingDateIsTheTimeTheResponseArrived() {
        var headers = Self.response().headers
        headers.remove(name: "Date")
        let entry = Self.entry(TransportResponse(statusCode: 200, headers: headers))
        // A tenth of the 3,720 seconds between Last-Modified and the response's arrival.
        #expect(entry.freshnessLifetime == 372 && entry.isHeuristic)
        #expect(entry.age(at: Self.responseTime) == 31)  // no apparent age: `Age` and the response delay
    }

    /// A range served from an entry keeps the times the stored response gave, read or not before.
    @Test func aChangedResponseKeepsTheStoredTimes() {
        for readFirst in [false, true] {
            var entry = Self.entry()
            if readFirst { _ = entry.freshnessLifetime }
            entry.response = TransportResponse(statusCode: 206, headers: ["Content-Range": "bytes 0-1/5"])
            #expect(entry.freshnessLifetime == 360 && entry.isHeuristic)
            #expect(entry.lastModified == "Thu, 26 Nov 2026 12:00:00 GMT")
            #expect(entry.age(at: Self.responseTime) == Self.correctedInitialAge)
        }
    }

    /// Many tasks read a stored entry's times first at once: every one of them reads the same, right, values.
    @Test func readersThatComeFirstTogetherReadTheSameTimes() async {
        for _ in 0..<20 {
            let cache = ResponseCache()
            let request = TransportRequest(url: Self.url)
            await cache.store(
                Self.response(), for: request, partition: nil, requestTime: Self.requestTime,
                responseTime: Self.responseTime)
            guard let entry = await cache.cachedResponse(for: request, partition: nil) else {
                Issue.record("the response was not stored")
                return
            }
            let reads = await withTaskGroup(of: [Double].self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        [
                            entry.freshnessLifetime, entry.age(at: Self.responseTime), entry.isHeuristic ? 1 : 0,
                            entry.lastModified == nil ? 0 : 1,
                        ]
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(reads.count == 8)
            #expect(reads.allSatisfy { $0 == [360, Self.correctedInitialAge, 1, 1] })
        }
    }

    /// Through the cache: within the heuristic lifetime a hit, past it a revalidation with the validator it keeps
    /// (`Last-Modified` when it has no `ETag`, read as valid only once parsed).
    @Test func aStoredEntryIsFreshThenValidatedByWhatItsFieldsSay() async {
        var headers = Self.response().headers
        headers.remove(name: "ETag")
        let cache = ResponseCache()
        let request = TransportRequest(url: Self.url)
        await cache.store(
            TransportResponse(statusCode: 200, headers: headers), for: request, partition: nil,
            requestTime: Self.requestTime, responseTime: Self.responseTime)
        let fresh = await cache.lookup(request, partition: nil, now: Self.responseTime.addingTimeInterval(200))
        guard case .hit = fresh else {
            Issue.record("expected a hit within the heuristic lifetime, got \(fresh)")
            return
        }
        let stale = await cache.lookup(request, partition: nil, now: Self.responseTime.addingTimeInterval(300))
        guard case .validate(_, let conditional) = stale else {
            Issue.record("expected a revalidation past the heuristic lifetime, got \(stale)")
            return
        }
        #expect(conditional.headers["If-Modified-Since"] == "Thu, 26 Nov 2026 12:00:00 GMT")
    }
}
