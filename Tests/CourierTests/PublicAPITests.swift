// This file imports Courier without @testable: it compiles only against the public API, the way a
// program outside the package sees it.
import Courier
import Foundation
import Testing

private struct Item: Decodable, Equatable {
    let id: Int
}

private struct Counting: HTTPTransport {
    func send(_ r: TransportRequest) async throws -> TransportResponse {
        TransportResponse(statusCode: 200, headers: ["Content-Type": "application/json"], body: Data(#"{"id":1}"#.utf8))
    }
}

@Suite struct PublicAPITests {
    @Test func theReadmeExampleCompilesAndRuns() async throws {
        let client = APIClient(
            baseURL: URL(string: "http://example.test")!, configuration: .init(transport: Counting()))
        let item: Item = try await client.send(APIRequest<Item>.get("/items/1")).value
        #expect(item == Item(id: 1))
    }

    @Test func aCustomAdapterAndRetryPolicyPlugIn() async throws {
        struct Stamp: RequestAdapter {
            func adapt(_ request: TransportRequest) async throws -> TransportRequest {
                var request = request
                request.headers["X-Stamp"] = "1"
                return request
            }
        }
        struct Echo: HTTPTransport {
            func send(_ request: TransportRequest) async throws -> TransportResponse {
                TransportResponse(statusCode: 200, body: Data((request.headers["X-Stamp"] ?? "missing").utf8))
            }
        }
        var configuration = APIClient.Configuration(transport: Echo(), adapters: [Stamp()])
        configuration.retryPolicy = .custom(maxAttempts: 2) { _ in .doNotRetry }
        let client = APIClient(baseURL: URL(string: "http://example.test")!, configuration: configuration)
        let body = try await client.send(APIRequest<Data>.get("/")).value
        #expect(String(decoding: body, as: UTF8.self) == "1")
    }
}
