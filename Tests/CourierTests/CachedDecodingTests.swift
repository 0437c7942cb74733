import Foundation
import Testing

@testable import Courier

/// A fresh cache hit of a decoded type keeps its decoded value beside the stored entry, so later hits skip decoding
/// (issue 14: a hit cost about 110,000 instructions, 80,000 of them decoding the same 221 bytes again).
@Suite(.timeLimit(.minutes(1))) struct CachedDecodingTests {
    typealias DecodeCounter = CallPathTests.DecodeCounter
    typealias Profile = CallPathTests.Profile
    typealias NameOnly = CallPathTests.NameOnly

    private static let body = #"{"name":"ada"}"#

    /// A client with a cache whose transport answers `{"name": names[n]}` to the n-th call, fresh for 60 s.
    private static func client(
        cache: ResponseCache, names: [String] = ["ada"], date: TestDate = TestDate()
    ) -> (APIClient, MockTransport, DecodeCounter) {
        let counter = DecodeCounter()
        let transport = MockTransport { _, index in
            .text(
                200, #"{"name":"\#(names[min(index, names.count - 1)])"}"#,
                headers: ["Cache-Control": "max-age=60", "Content-Type": "application/json"])
        }
        let configuration = APIClient.Configuration(
            transport: transport, cache: cache, retryPolicy: .never, currentDate: { date.now })
        configuration.decoder.userInfo[DecodeCounter.key] = counter
        return (
            APIClient(baseURL: URL(string: "https://api.example.com")!, configuration: configuration), transport,
            counter
        )
    }

    @Test func freshHitsOfOneTypeDecodeOncePerStoredResponse() async throws {
        let cache = ResponseCache()
        let (client, transport, counter) = Self.client(cache: cache)
        for _ in 0..<10 {
            let response = try await client.send(APIRequest<Profile>.get("/me"))
            #expect(response.value.name == "ada")
        }
        #expect(transport.callCount == 1)
        #expect(await cache.statistics.hits == 9)
        // Once in the flight, once by the first hit (which keeps it); the eight hits after decode nothing.
        #expect(counter["Profile"] == 2)
        let entry = try #require(await cache.cachedResponse(for: transport.requests[0], partition: nil))
        #expect(await cache.totalBytes == entry.byteCount + Self.body.utf8.count, "the kept value counts its body")
    }

    @Test func aHitOfAnotherTypeOrDecoderDecodesItsOwn() async throws {
        let (client, _, counter) = Self.client(cache: ResponseCache())
        _ = try await client.send(APIRequest<Profile>.get("/me"))
        _ = try await client.send(APIRequest<Profile>.get("/me"))  // keeps the Profile value
        for _ in 0..<3 {
            #expect(try await client.send(APIRequest<NameOnly>.get("/me")).value.name == "ada")
        }
        #expect(counter["NameOnly"] == 3, "another type never receives the kept value")

        let ownCounter = DecodeCounter()
        let ownDecoder = JSONDecoder()
        ownDecoder.userInfo[DecodeCounter.key] = ownCounter
        var request = APIRequest<Profile>.get("/me")
        request.decoder = ownDecoder
        for _ in 0..<3 {
            #expect(try await client.send(request).value.name == "ada")
        }
        #expect(ownCounter["Profile"] == 3, "a value decoded by another decoder is never served")
        #expect(counter["Profile"] == 2)
    }

    @Test func aDecodedValueIsKeptOnlyWithinTheByteBudget() async throws {
        // Room for the entry, not for the entry and its decoded value.
        let probe = CachedResponse(
            response: .text(
                200, Self.body, headers: ["Cache-Control": "max-age=60", "Content-Type": "application/json"]),
            request: TransportRequest(url: URL(string: "https://api.example.com/me")!), requestTime: Date(),
            responseTime: Date())
        let cache = ResponseCache(maxBytes: probe.byteCount + Self.body.utf8.count - 1)
        let (client, transport, counter) = Self.client(cache: cache)
        for _ in 0..<5 {
            _ = try await client.send(APIRequest<Profile>.get("/me"))
        }
        #expect(transport.callCount == 1)
        #expect(await cache.totalBytes == probe.byteCount)
        #expect(counter["Profile"] == 5, "nothing kept: every hit decodes")
    }

    @Test func aNewStoredResponseIsNeverServedWithTheOldDecodedValue() async throws {
        let date = TestDate()
        let (client, transport, _) = Self.client(cache: ResponseCache(), names: ["v1", "v2"], date: date)
        _ = try await client.send(APIRequest<Profile>.get("/me"))
        #expect(try await client.send(APIRequest<Profile>.get("/me")).value.name == "v1")
        date.advance(by: 120)
        #expect(try await client.send(APIRequest<Profile>.get("/me")).value.name == "v2")
        #expect(try await client.send(APIRequest<Profile>.get("/me")).value.name == "v2")
        #expect(transport.callCount == 2)
    }
}
