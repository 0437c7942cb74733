import Foundation

@testable import Courier

/// An `APIClient` with a ``ResponseCache`` over a ``MockTransport`` whose answers come from a closure, and a date
/// that moves only when the test says so: one exchange after another, checking what reached the transport.
struct CacheHarness {
    let date: TestDate
    let transport: MockTransport
    let cache: ResponseCache
    let client: APIClient

    /// - Parameters:
    ///   - cache: The cache under test.
    ///   - configure: Changes to the client's configuration (a default freshness, say).
    ///   - handler: The server: the request, its index from 0, and the current date as an IMF-fixdate.
    init(
        cache: ResponseCache = ResponseCache(), configure: (inout APIClient.Configuration) -> Void = { _ in },
        _ handler: @escaping @Sendable (TransportRequest, Int, String) async throws -> TransportResponse
    ) {
        let date = TestDate()
        let transport = MockTransport { request, index in try await handler(request, index, HTTPDate.format(date.now)) }
        var configuration = APIClient.Configuration(
            transport: transport, cache: cache, retryPolicy: .never, currentDate: { date.now })
        configuration.acceptableStatusCodes = 100..<600
        configure(&configuration)
        self.date = date
        self.transport = transport
        self.cache = cache
        self.client = APIClient(baseURL: URL(string: "http://api.test")!, configuration: configuration)
    }

    /// Sends a request and returns the answer with how many requests reached the transport meanwhile.
    func send(
        _ path: String = "/r", method: RequestMethod = .get, headers: HeaderFields = [:],
        policy: CachePolicy = .useProtocolPolicy
    ) async throws -> (response: APIResponse<Data>, sent: [TransportRequest]) {
        let before = transport.callCount
        let request = APIRequest<Data>(method: method, path: path, headers: headers, cachePolicy: policy)
        let response = try await client.send(request)
        await client.backgroundRefreshes.waitUntilIdle()
        return (response, Array(transport.requests.dropFirst(before)))
    }
}

extension APIResponse<Data> {
    /// The body as UTF-8 text.
    var text: String { String(decoding: data, as: UTF8.self) }
}
