import Benchmark
import BenchmarkSupport
import Courier
import Foundation

/// A transport that accepts only the token "fresh" and answers everything else with 401.
private struct TokenGate: HTTPTransport {
    func send(_ request: TransportRequest) async throws -> TransportResponse {
        guard request.headers["Authorization"] == "Bearer fresh" else { return TransportResponse(statusCode: 401) }
        return TransportResponse(statusCode: 200, body: Data("ok".utf8))
    }
}

func refreshBenchmarks() {
    Benchmark("TokenRefresher: 1,000 concurrent 401s, one refresh", configuration: .init(maxIterations: 50)) {
        benchmark in
        let refreshes = Counter()
        let refresher = TokenRefresher(credential: Credential(accessToken: "stale", identity: "user")) { _ in
            refreshes.increment()
            return Credential(accessToken: "fresh", identity: "user")
        }
        var configuration = APIClient.Configuration(transport: TokenGate(), cache: nil, retryPolicy: .never)
        configuration.authenticator = refresher
        configuration.isCoalescingEnabled = false
        let client = APIClient(baseURL: URL(string: "https://api.example.com")!, configuration: configuration)
        benchmark.startMeasurement()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<1_000 {
                group.addTask { blackHole(try? await client.send(APIRequest<Data>.get("/items/\(index)")).value) }
            }
        }
        benchmark.stopMeasurement()
        precondition(refreshes.value == 1, "expected one refresh, saw \(refreshes.value)")
    }
}
