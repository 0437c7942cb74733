import Foundation
import Testing

@testable import Courier

/// Partial content (RFC 9111 §3.3–3.4, RFC 9110 §14): ranges served from a stored complete or partial response,
/// partial responses with one strong validator combined, stored header fields kept.
@Suite struct CacheRangeTests {
    /// A server that answers a plain `GET` with `body` and a `Range` with `partial(range)`.
    private static func server(
        body: String = "0123456789A", headers: HeaderFields = ["Cache-Control": "max-age=3600", "A": "1"],
        partial: @escaping @Sendable (String) -> TransportResponse? = { _ in nil }
    ) -> CacheHarness {
        CacheHarness { request, index, now in
            if let range = request.headers["Range"], let answer = partial(range) { return answer }
            var headers = headers
            headers["Date"] = now
            return .text(200, index == 0 ? body : "later", headers: headers)
        }
    }

    private static func partial(_ body: String, _ contentRange: String, etag: String? = nil, extra: HeaderFields = [:])
        -> TransportResponse
    {
        var headers = extra
        headers["Cache-Control"] = "max-age=3600"
        headers["Content-Range"] = contentRange
        if let etag { headers["ETag"] = etag }
        return .text(206, body, headers: headers)
    }

    @Test(arguments: [
        ("bytes=0-1", "01", "bytes 0-1/11"), ("bytes=1-", "123456789A", "bytes 1-10/11"),
        ("bytes=-1", "A", "bytes 10-10/11"), ("bytes=3-100", "3456789A", "bytes 3-10/11"),
    ])
    func aStoredCompleteResponseAnswersARange(range: String, expected: String, contentRange: String) async throws {
        let harness = Self.server()
        _ = try await harness.send()
        let ranged = try await harness.send(headers: ["Range": range])
        #expect(ranged.sent.isEmpty)
        #expect(ranged.response.source == .cache)
        #expect(ranged.response.statusCode == 206)
        #expect(ranged.response.text == expected)
        #expect(ranged.response.headers["Content-Range"] == contentRange)
        #expect(ranged.response.headers["A"] == "1", "stored header fields are kept")
    }

    @Test(arguments: [("bytes=-6", "456789"), ("bytes=6-8", "678"), ("bytes=6-", "6789"), ("bytes=-1", "9")])
    func aStoredPartialResponseAnswersTheRangesItCovers(range: String, expected: String) async throws {
        let harness = Self.server { _ in Self.partial("456789", "bytes 4-9/10") }
        let first = try await harness.send(headers: ["Range": "bytes=-6"])
        #expect(first.response.statusCode == 206)
        let ranged = try await harness.send(headers: ["Range": range])
        #expect(ranged.sent.isEmpty, "\(range) is covered")
        #expect(ranged.response.statusCode == 206)
        #expect(ranged.response.text == expected)
    }

    @Test(arguments: ["bytes=0-5", "bytes=2-3", "bytes=0-1,5-6", "bytes=x", "lines=1-2"])
    func aRangeTheStoredPartDoesNotCoverGoesToTheServer(range: String) async throws {
        let harness = Self.server { _ in Self.partial("456789", "bytes 4-9/10") }
        _ = try await harness.send(headers: ["Range": "bytes=-6"])
        let ranged = try await harness.send(headers: ["Range": range])
        #expect(ranged.sent.count == 1)
        #expect(ranged.sent.first?.headers["Range"] == range)
    }

    @Test func aPartialResponseNeverAnswersAPlainGET() async throws {
        let harness = Self.server { _ in Self.partial("456789", "bytes 4-9/10") }
        _ = try await harness.send(headers: ["Range": "bytes=-6"])
        let plain = try await harness.send()
        #expect(plain.sent.count == 1)
        #expect(plain.response.statusCode == 200)
    }

    @Test func aRangeBeyondTheRepresentationGoesToTheServer() async throws {
        let harness = Self.server()
        _ = try await harness.send()
        let ranged = try await harness.send(headers: ["Range": "bytes=50-60"])
        #expect(ranged.sent.count == 1)
    }

    @Test func partsWithOneStrongValidatorCombine() async throws {
        let harness = Self.server { range in
            switch range {
            case "bytes=0-4": Self.partial("01234", "bytes 0-4/10", etag: #""s""#, extra: ["A": "1"])
            case "bytes=5-9": Self.partial("56789", "bytes 5-9/10", etag: #""s""#)
            default: nil
            }
        }
        _ = try await harness.send(headers: ["Range": "bytes=0-4"])
        _ = try await harness.send(headers: ["Range": "bytes=5-9"])
        let across = try await harness.send(headers: ["Range": "bytes=3-7"])
        #expect(across.sent.isEmpty)
        #expect(across.response.text == "34567")
        #expect(across.response.headers["A"] == "1", "the stored fields survive the update")
        let whole = try await harness.send()
        #expect(whole.sent.isEmpty, "the parts make the whole")
        #expect(whole.response.statusCode == 200)
        #expect(whole.response.text == "0123456789")
        #expect(whole.response.headers["Content-Range"] == nil)
    }

    @Test(arguments: [(#""s""#, #""t""#), (#"W/"s""#, #"W/"s""#), (nil, nil)] as [(String?, String?)])
    func partsWithoutOneStrongValidatorDoNotCombine(first: String?, second: String?) async throws {
        let harness = Self.server { range in
            switch range {
            case "bytes=0-4": Self.partial("01234", "bytes 0-4/10", etag: first)
            case "bytes=5-9": Self.partial("abcde", "bytes 5-9/10", etag: second)
            default: nil
            }
        }
        _ = try await harness.send(headers: ["Range": "bytes=0-4"])
        _ = try await harness.send(headers: ["Range": "bytes=5-9"])
        let across = try await harness.send(headers: ["Range": "bytes=3-7"])
        #expect(across.sent.count == 1)
    }

    @Test(arguments: ["bytes 0-9/10", "bytes 0-2/10", "bytes 5-2/10", "bytes */10", "bytes 0-4/3", "garbage"])
    func aPartialResponseThatContradictsItselfIsNotStored(contentRange: String) async throws {
        let harness = Self.server { _ in Self.partial("01234", contentRange) }
        _ = try await harness.send(headers: ["Range": "bytes=0-4"])
        #expect(await harness.cache.count == 0)
    }
}
