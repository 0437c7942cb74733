import Foundation
import Testing

@testable import Courier

private let tag = #""a""#

/// What is stored and for how long: `Age` lists, explicit freshness on any final status, `Vary` normalisation,
/// `must-understand`, fields never stored, `only-if-cached` and the `Age` a `304` leaves behind.
@Suite struct CacheFreshnessRulesTests {
    // MARK: Age (RFC 9111 §5.1)

    @Test(
        arguments: [
            (["7200, 0"], 7200.0), (["7200", "0"], 7200), (["0, 7200"], 0), (["0", "7200"], 0),
            (["3600", "3600"], 3600),
            (["abc"], 0), (["-7200"], 0), (["7200.0"], 0), (["7200;foo=bar"], 0), (["7200;foo=111"], 0),
            (["abc, 7200"], 0),
        ] as [([String], TimeInterval)])
    func ageTakesTheFirstMemberOfTheFirstLine(lines: [String], expected: TimeInterval) {
        #expect(Freshness.ageValue(lines) == expected)
    }

    @Test func optionalWhitespaceAroundAnAgeOrAListMemberIsIgnored() {
        #expect(Freshness.ageValue(["\t 60 \t, 5"]) == 60)
        #expect(
            CachedResponse.listMembers(["\t Accept ,, Origin\t", " ", "\tX-Token"]) == ["accept", "origin", "x-token"])
        // Read over bytes when ASCII (lower-cased only where a capital is), as Unicode text otherwise.
        #expect(CachedResponse.listMembers(["KEEP-ALIVE,x-hop", ",", ""]) == ["keep-alive", "x-hop"])
        #expect(CachedResponse.listMembers([" Ünïcode ,X-Ä\t"]) == ["ünïcode", "x-ä"])
        #expect(" \t\"a\" \t".trimmingOptionalWhitespace == "\"a\"")
        #expect("\u{00A0}a".trimmingOptionalWhitespace == "\u{00A0}a")
    }

    @Test func theStatusAndFieldListsHoldTheRFCsMembers() {
        let heuristic: Set = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]  // RFC 9110 §15.1
        for status in 100...599 {
            #expect(Freshness.isHeuristicallyCacheable(status) == heuristic.contains(status), "\(status)")
            #expect(Freshness.isUnderstood(status) == (heuristic.contains(status) || [302, 307].contains(status)))
        }
        let hopByHop: Set = [
            "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade", "trailer",
        ]
        let neverStored = hopByHop.union([
            "set-cookie", "set-cookie2", "proxy-authenticate", "proxy-authentication-info", "proxy-authorization",
        ])
        let keptOnUpdate = hopByHop.union(["content-length", "content-encoding", "content-range"])
        let names = neverStored.union(keptOnUpdate).union(["age", "etag", "cache-control", "set-cookie3", "tee", ""])
        for name in names {
            #expect(CachedResponse.isHopByHop(name) == hopByHop.contains(name), "\(name)")
            #expect(CachedResponse.isNeverStored(name) == neverStored.contains(name), "\(name)")
            #expect(CachedResponse.isKeptOnUpdate(name) == keptOnUpdate.contains(name), "\(name)")
        }
    }

    @Test(arguments: [["7200, 0"], ["7200", "0"]])
    func anAgeListFromAnOldResponseMakesItStale(lines: [String]) async throws {
        let harness = CacheHarness { _, index, now in
            var headers: HeaderFields = ["Cache-Control": "max-age=3600", "Date": now]
            if index == 0 { for line in lines { headers.add(name: "Age", value: line) } }
            return .text(200, "v\(index + 1)", headers: headers)
        }
        _ = try await harness.send()
        let second = try await harness.send()
        #expect(second.sent.count == 1)
        #expect(second.response.source == .network)
        #expect(second.response.text == "v2")
    }

    // MARK: Explicit Freshness on Any Final Status (RFC 9111 §3)

    @Test(arguments: [299, 400, 499, 500, 502, 503, 504, 599])
    func anyFinalStatusWithExplicitFreshnessIsStoredAndGoesStale(status: Int) async throws {
        for freshness: HeaderFields.Field in [
            .init(name: "Cache-Control", value: "max-age=60"), .init(name: "Expires", value: TestDate.http(60)),
        ] {
            let harness = CacheHarness { _, index, now in
                var headers: HeaderFields = ["Date": now]
                if index == 0 { headers.add(name: freshness.name, value: freshness.value) }
                return .text(index == 0 ? status : 200, "v\(index + 1)", headers: headers)
            }
            _ = try await harness.send()
            harness.date.advance(by: 30)
            let fresh = try await harness.send()
            #expect(fresh.sent.isEmpty, "\(status) with \(freshness.name) served from storage")
            #expect(fresh.response.statusCode == status)
            #expect(fresh.response.source == .cache)
            harness.date.advance(by: 31)
            let stale = try await harness.send()
            #expect(stale.sent.count == 1, "\(status) went stale")
            #expect(stale.response.statusCode == 200)
        }
    }

    @Test(arguments: [299, 500, 503])
    func heuristicFreshnessStaysWithHeuristicallyCacheableCodes(status: Int) async throws {
        let harness = CacheHarness { _, index, now in
            .text(status, "v\(index + 1)", headers: ["Date": now, "Last-Modified": TestDate.http(-100_000)])
        }
        _ = try await harness.send()
        let second = try await harness.send()
        #expect(second.sent.count == 1)
        #expect(await harness.cache.count == 0)
    }

    // MARK: Vary (RFC 9111 §4.1)

    @Test(arguments: [
        ("Foo", "1,2", " 1, 2 "), ("Accept-Language", "en, de", "eN, De"), ("Accept-Language", "en, de", " en ,   de"),
        ("Accept-Language", "en, de", "de, en"), ("Accept-Encoding", "gzip, br", "br,GZIP"),
        ("Accept", "text/html, application/json", "TEXT/HTML ,application/json"),
    ])
    func equivalentSelectingHeadersMatchOneVariant(name: String, stored: String, later: String) async throws {
        let harness = CacheHarness { _, index, now in
            .text(200, "v\(index + 1)", headers: ["Cache-Control": "max-age=60", "Vary": name, "Date": now])
        }
        _ = try await harness.send(headers: [name: stored])
        let second = try await harness.send(headers: [name: later])
        #expect(second.sent.isEmpty, "\(stored) ≡ \(later)")
        #expect(second.response.text == "v1")
    }

    @Test(arguments: [("Foo", "1, 2", "2, 1"), ("Foo", "a", "A"), ("Accept-Language", "en", "de")])
    func differentSelectingHeadersStayDifferent(name: String, stored: String, later: String) async throws {
        let harness = CacheHarness { _, index, now in
            .text(200, "v\(index + 1)", headers: ["Cache-Control": "max-age=60", "Vary": name, "Date": now])
        }
        _ = try await harness.send(headers: [name: stored])
        let second = try await harness.send(headers: [name: later])
        #expect(second.sent.count == 1, "\(stored) ≠ \(later)")
    }

    // MARK: must-understand (RFC 9111 §5.2.2.3)

    @Test func mustUnderstandWithAnUnderstoodStatusOverridesNoStore() async throws {
        let harness = CacheHarness { _, index, now in
            .text(
                200, "v\(index + 1)", headers: ["Cache-Control": "must-understand, no-store, max-age=60", "Date": now])
        }
        _ = try await harness.send()
        let second = try await harness.send()
        #expect(second.sent.isEmpty)
        #expect(second.response.text == "v1")
    }

    @Test func mustUnderstandWithAnUnknownStatusIsNotStored() async throws {
        let harness = CacheHarness { _, index, now in
            .text(299, "v\(index + 1)", headers: ["Cache-Control": "must-understand, max-age=60", "Date": now])
        }
        _ = try await harness.send()
        let second = try await harness.send()
        #expect(second.sent.count == 1)
    }

    // MARK: Fields Never Stored (RFC 9111 §3.1)

    @Test func proxyAuthenticationFieldsAreNeverStored() async throws {
        let harness = CacheHarness { _, _, now in
            .text(
                200, "v",
                headers: [
                    "Cache-Control": "max-age=60", "Date": now, "Proxy-Authenticate": #"Basic realm="p""#,
                    "Proxy-Authentication-Info": "nextnonce=1", "Proxy-Authorization": "Basic c2VjcmV0", "X-Kept": "1",
                ])
        }
        _ = try await harness.send()
        let second = try await harness.send()
        #expect(second.sent.isEmpty)
        for name in ["Proxy-Authenticate", "Proxy-Authentication-Info", "Proxy-Authorization"] {
            #expect(second.response.headers[name] == nil, "\(name) served from storage")
        }
        #expect(second.response.headers["X-Kept"] == "1")
    }

    // MARK: only-if-cached (RFC 9111 §5.2.1.7)

    @Test(arguments: [CachePolicy.useProtocolPolicy, .staleWhileRevalidate])
    func onlyIfCachedNeverReachesTheNetworkForAStaleWhileRevalidateEntry(policy: CachePolicy) async throws {
        let harness = CacheHarness { _, index, now in
            .text(
                200, "v\(index + 1)",
                headers: ["Cache-Control": "max-age=60, stale-while-revalidate=600", "ETag": tag, "Date": now])
        }
        _ = try await harness.send()
        harness.date.advance(by: 90)
        await #expect(throws: APIError.self) {
            try await harness.send(headers: ["Cache-Control": "only-if-cached"], policy: policy)
        }
        await harness.client.backgroundRefreshes.waitUntilIdle()
        #expect(harness.transport.callCount == 1)
    }

    // MARK: Age After a 304 (RFC 9111 §4.3.4)

    @Test func a304WithoutAgeLeavesNoOldAgeBehind() async throws {
        let harness = CacheHarness { request, index, now in
            if request.headers.contains("If-None-Match") {
                return .text(304, headers: ["Cache-Control": "max-age=60", "ETag": tag, "Date": now])
            }
            return .text(200, "v1", headers: ["Cache-Control": "max-age=60", "Age": "100", "ETag": tag, "Date": now])
        }
        _ = try await harness.send()
        let revalidated = try await harness.send()
        #expect(revalidated.sent.count == 1)
        #expect(revalidated.response.source == .revalidated)
        harness.date.advance(by: 10)
        let third = try await harness.send()
        #expect(third.sent.isEmpty, "fresh for 60 s after the 304")
        #expect(third.response.headers["Age"] == "10")
    }

    // MARK: Age of a Hit (RFC 9111 §5.1)

    /// Hits within one second share the response built for that age; a later second, or a response stored anew,
    /// gets its own. (A reused response served a frozen `Age`, or an old body after a new store, would fail here.)
    @Test func aHitCarriesTheAgeOfItsOwnSecondAndTheBodyStoredLast() async throws {
        let harness = CacheHarness { _, index, now in
            .text(200, "v\(index + 1)", headers: ["Cache-Control": "max-age=600", "Date": now])
        }
        _ = try await harness.send()
        var ages: [String?] = []
        for step in [0.2, 0.3, 0.6, 0.5, 1.0, 60] {
            harness.date.advance(by: step)
            let hit = try await harness.send()
            #expect(hit.sent.isEmpty)
            #expect(hit.response.text == "v1")
            ages.append(hit.response.headers["Age"])
        }
        #expect(ages == ["0", "0", "1", "1", "2", "62"])
        let reloaded = try await harness.send(headers: ["Cache-Control": "no-cache"])
        #expect(reloaded.sent.count == 1)
        harness.date.advance(by: 0.2)
        let hit = try await harness.send()
        #expect(hit.sent.isEmpty)
        #expect(hit.response.text == "v2", "the entry stored last, not the response served for the old one")
        #expect(hit.response.headers["Age"] == "0")
    }
}
