import Foundation
import Testing

@testable import Courier

/// The path of one call: the cache answers with a plan value, and a flight decodes its body once for every caller
/// that asks for the same type.
@Suite(.timeLimit(.minutes(1))) struct CallPathTests {
    /// Counts how often the types below are decoded, through the decoder's user info (no global state).
    final class DecodeCounter: Sendable {
        private let counts = Locked([String: Int]())
        func count(_ name: String) { counts.withLock { $0[name, default: 0] += 1 } }
        subscript(name: String) -> Int { counts.withLock { $0[name] ?? 0 } }
        static let key = CodingUserInfoKey(rawValue: "courier.decodeCounter")!
    }

    struct Profile: Decodable, Sendable, Equatable {
        let name: String
        init(from decoder: any Decoder) throws {
            (decoder.userInfo[DecodeCounter.key] as? DecodeCounter)?.count("Profile")
            name = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .name)
        }
        enum CodingKeys: CodingKey { case name }
    }

    struct NameOnly: Decodable, Sendable {
        let name: String
        init(from decoder: any Decoder) throws {
            (decoder.userInfo[DecodeCounter.key] as? DecodeCounter)?.count("NameOnly")
            name = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .name)
        }
        enum CodingKeys: CodingKey { case name }
    }

    /// A client whose transport holds every call until `expected` callers wait on the coalescer.
    private static func heldClient(expected: Int) -> (APIClient, MockTransport, DecodeCounter) {
        let counter = DecodeCounter()
        let clientBox = Locked<APIClient?>(nil)
        let transport = MockTransport { _, _ in
            for _ in 0..<100_000 {
                if let client = clientBox.withLock({ $0 }), await client.coalescer.waiterCount >= expected { break }
                await Task.yield()
            }
            return .text(200, #"{"name":"ada"}"#)
        }
        let configuration = APIClient.Configuration(transport: transport, cache: nil, retryPolicy: .never)
        configuration.decoder.userInfo[DecodeCounter.key] = counter
        let client = APIClient(baseURL: URL(string: "https://api.example.com")!, configuration: configuration)
        clientBox.withLock { $0 = client }
        return (client, transport, counter)
    }

    @Test func joinersOfOneTypeShareOneDecodedValue() async throws {
        let (client, transport, counter) = Self.heldClient(expected: 100)
        let profiles = try await withThrowingTaskGroup(of: APIResponse<Profile>.self) { group in
            for _ in 0..<100 { group.addTask { try await client.send(APIRequest<Profile>.get("/me")) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(transport.callCount == 1)
        #expect(profiles.count == 100)
        #expect(profiles.allSatisfy { $0.value.name == "ada" })
        #expect(profiles.filter(\.joined).count == 99)
        #expect(counter["Profile"] == 1, "decoded once, in the flight")
    }

    @Test func joinersOfAnotherTypeDecodeTheirOwn() async throws {
        let (client, transport, counter) = Self.heldClient(expected: 10)
        try await withThrowingTaskGroup(of: Void.self) { group in
            // The leader's type is whichever arrives first; the other type decodes per caller.
            for index in 0..<10 {
                group.addTask {
                    if index.isMultiple(of: 2) {
                        _ = try await client.send(APIRequest<Profile>.get("/me"))
                    } else {
                        _ = try await client.send(APIRequest<NameOnly>.get("/me"))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(transport.callCount == 1)
        let decodes = counter["Profile"] + counter["NameOnly"]
        #expect(decodes == 6, "one shared decode for the leader's five, five own decodes for the others")
    }

    // MARK: Plans

    private static func planningClient(cache: ResponseCache?, date: TestDate) -> APIClient {
        APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(
                transport: MockTransport.responding(), cache: cache, retryPolicy: .never, currentDate: { date.now }))
    }

    private static func adapted(_ method: RequestMethod = .get, _ path: String = "/feed") -> Adapted {
        let request = TransportRequest(method: method, url: URL(string: "https://api.example.com" + path)!)
        return Adapted(unadapted: request, request: request)
    }

    @Test func theCachePlansWhatToServeSendAndRecord() async throws {
        let date = TestDate()
        let cache = ResponseCache()
        let client = Self.planningClient(cache: cache, date: date)
        let id = CallID(rawValue: 1)
        let request = Self.adapted().request

        guard
            case .send(let miss) = try client.plan(
                Self.adapted(), policy: .useProtocolPolicy, partition: nil, id: id),
            case .store(_, _, nil) = miss.record
        else {
            Issue.record("a miss sends and stores")
            return
        }

        await cache.store(
            .text(200, "feed", headers: ["Cache-Control": "max-age=60", "ETag": "\"v1\""]), for: request,
            partition: nil,
            requestTime: date.now, responseTime: date.now)
        guard
            case .serve(let fresh, _) = try client.plan(
                Self.adapted(), policy: .useProtocolPolicy, partition: nil, id: id)
        else {
            Issue.record("a fresh entry is served")
            return
        }
        #expect(fresh.body == Data("feed".utf8))

        date.advance(by: 120)
        guard
            case .send(let validation) = try client.plan(
                Self.adapted(), policy: .useProtocolPolicy, partition: nil, id: id),
            case .store(_, _, let entry?) = validation.record
        else {
            Issue.record("a stale entry with a validator is revalidated")
            return
        }
        #expect(validation.request.headers["If-None-Match"] == "\"v1\"")
        #expect(validation.fallback != nil && entry.etag == "\"v1\"")

        guard
            case .serveStale = try client.plan(
                Self.adapted(), policy: .staleWhileRevalidate, partition: nil, id: id)
        else {
            Issue.record("the policy serves stale and revalidates")
            return
        }

        guard
            case .send(let post) = try client.plan(
                Self.adapted(.post), policy: .useProtocolPolicy, partition: nil, id: id),
            case .invalidate = post.record
        else {
            Issue.record("an unsafe method invalidates")
            return
        }

        let uncached = Self.planningClient(cache: nil, date: date)
        guard
            case .send(let plain) = try uncached.plan(
                Self.adapted(), policy: .useProtocolPolicy, partition: nil, id: id),
            case .nothing = plain.record
        else {
            Issue.record("without a cache nothing is recorded")
            return
        }
        #expect(throws: APIError.self) {
            try uncached.plan(Self.adapted(), policy: .onlyIfCached, partition: nil, id: id)
        }
        #expect(throws: APIError.self, "only a GET can be answered from storage") {
            try client.plan(Self.adapted(.post), policy: .onlyIfCached, partition: nil, id: id)
        }
    }
}
