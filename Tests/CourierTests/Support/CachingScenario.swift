import Foundation
import Testing

@testable import Courier

/// One row of the caching table: a first `GET` is answered and stored (or not), the date moves, perhaps an unsafe
/// request happens, then a second request is sent, and the row says what reached the transport and where the
/// answer came from.
struct CachingScenario: Sendable, CustomTestStringConvertible {
    /// How the server answers a request that carries the cache's conditional fields.
    enum ValidationReply: Sendable {
        case notModified(HeaderFields)
        case status(Int)
        case transportFailure
    }

    /// An unsafe request sent between the two `GET`s, and the server's answer to it.
    struct Between: Sendable {
        var method: RequestMethod
        var path: String
        var status: Int = 200
        var headers: HeaderFields = [:]
    }

    /// What the second request should observe.
    struct Expect: Sendable {
        /// Whether the second request (or its background refresh) reached the transport.
        var called: Bool
        var ifNoneMatch: String?
        var ifModifiedSince: String?
        /// Where the answer came from; `nil` means the call fails with `APIError.notCached`.
        var source: ResponseSource?
        /// The body of the answer; by default `v1` for stored answers and `v2` for fresh network answers.
        var body: String?
        /// A header the answer must carry.
        var header: HeaderFields.Field?

        static let cached = Expect(called: false, source: .cache)
        static let network = Expect(called: true, source: .network)
        static let notCached = Expect(called: false, source: nil)
        static func revalidated(etag: String) -> Expect {
            Expect(called: true, ifNoneMatch: etag, source: .revalidated)
        }
        static func revalidated(since: String) -> Expect {
            Expect(called: true, ifModifiedSince: since, source: .revalidated)
        }
        static func staleWhileRevalidate(etag: String) -> Expect {
            Expect(called: true, ifNoneMatch: etag, source: .staleWhileRevalidate)
        }
    }

    var name: String
    var first: HeaderFields
    var firstStatus = 200
    var firstRequest: HeaderFields = [:]
    /// Seconds the first exchange takes on the wire (the date moves while the transport works).
    var firstDelay: TimeInterval = 0
    var elapsed: TimeInterval
    var between: Between?
    var path = "/r"
    var second: HeaderFields = [:]
    var secondMethod: RequestMethod = .get
    var policy: CachePolicy = .useProtocolPolicy
    var reply: ValidationReply = .notModified([:])
    var expect: Expect

    var testDescription: String { name }

    /// Runs the scenario through an `APIClient` over a `MockTransport`, with a controllable date.
    func run() async throws {
        let date = TestDate()
        let scenario = self
        let transport = MockTransport { request, index in
            if index == 0 {
                date.advance(by: scenario.firstDelay)
                var headers = scenario.first
                if !headers.contains("Date") { headers["Date"] = TestDate.http(0) }
                if headers["Date"] == "-" { headers["Date"] = nil }
                return TransportResponse(statusCode: scenario.firstStatus, headers: headers, body: Data("v1".utf8))
            }
            if !request.method.isSafe, let between = scenario.between {
                return TransportResponse(statusCode: between.status, headers: between.headers)
            }
            let now = HTTPDate.format(date.now)
            if request.headers.contains("If-None-Match") || request.headers.contains("If-Modified-Since") {
                switch scenario.reply {
                case .notModified(let headers):
                    var headers = headers
                    if !headers.contains("Date") { headers["Date"] = now }
                    return TransportResponse(statusCode: 304, headers: headers)
                case .status(let status):
                    return TransportResponse(statusCode: status, headers: ["Date": now], body: Data("boom".utf8))
                case .transportFailure:
                    throw APIError.transport(.connectionLost, underlying: URLError(.networkConnectionLost))
                }
            }
            return TransportResponse(statusCode: 200, headers: ["Date": now], body: Data("v2".utf8))
        }
        var configuration = APIClient.Configuration(
            transport: transport, cache: ResponseCache(), retryPolicy: .never, currentDate: { date.now })
        configuration.acceptableStatusCodes = 100..<600
        // The scenarios are about caching, over a stub transport: `Authorization` may go to `http://api.test`.
        configuration.allowsCredentialsOverCleartext = true
        let client = APIClient(baseURL: URL(string: "http://api.test")!, configuration: configuration)

        _ = try await client.send(APIRequest<Data>(path: path, headers: firstRequest))
        date.advance(by: elapsed)
        if let between {
            _ = try await client.send(APIRequest<Data>(method: between.method, path: between.path))
        }
        let before = transport.callCount
        let outcome: Result<APIResponse<Data>, any Error>
        do {
            let request = APIRequest<Data>(method: secondMethod, path: path, headers: second, cachePolicy: policy)
            outcome = .success(try await client.send(request))
        } catch {
            outcome = .failure(error)
        }
        await client.backgroundRefreshes.waitUntilIdle()
        let sent = transport.requests.dropFirst(before)

        #expect(!sent.isEmpty == expect.called, "transport called")
        #expect(sent.count <= 1, "at most one request")
        #expect(sent.last?.headers["If-None-Match"] == expect.ifNoneMatch)
        #expect(sent.last?.headers["If-Modified-Since"] == expect.ifModifiedSince)
        switch (outcome, expect.source) {
        case (.success(let response), let source?):
            #expect(response.source == source)
            let defaultBody = source == .network ? "v2" : "v1"
            #expect(String(decoding: response.data, as: UTF8.self) == (expect.body ?? defaultBody))
            if !expect.called || source == .staleWhileRevalidate {
                #expect(response.attempts == 0)
            } else if source != .cache {
                #expect(response.attempts == 1)
            }
            if let header = expect.header { #expect(response.headers[header.name] == header.value) }
        case (.failure(let error), nil):
            guard case APIError.notCached = error else {
                Issue.record("expected notCached, got \(error)")
                return
            }
        case (.success(let response), nil):
            Issue.record("expected notCached, got a response from \(response.source)")
        case (.failure(let error), _?):
            Issue.record("unexpected error \(error)")
        }
    }
}
