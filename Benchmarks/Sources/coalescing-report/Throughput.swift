import BenchmarkSupport
import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Distinct keys against a real server: what Courier costs over the URLSession it sends with.
enum Throughput {
    struct Result {
        let name: String
        let requests: Int
        let failures: Int
        let wall: Duration

        var perSecond: Double { Double(requests) / max(wall.milliseconds / 1_000, 1e-9) }
    }

    static func run(upstream: URL, requests: Int, concurrency: Int) async -> [Result] {
        let session = URLSession(configuration: URLSessionTransport.defaultConfiguration)
        let client = APIClient(
            baseURL: upstream,
            configuration: .init(
                transport: URLSessionTransport(session: session), cache: nil, retryPolicy: .never))
        let rawURLs = (0..<requests).map { upstream.appending(queryItems: [URLQueryItem(name: "key", value: "\($0)")]) }
        // Alternate the order so neither side always runs on a warmer connection pool.
        var results: [Result] = []
        for round in 0..<2 {
            for side in (round == 0 ? [0, 1] : [1, 0]) {
                let result: Result
                if side == 0 {
                    result = await measure("raw URLSession", requests, concurrency) { index in
                        let (_, response) = try await session.data(for: URLRequest(url: rawURLs[index]))
                        return (response as? HTTPURLResponse)?.statusCode == 200
                    }
                } else {
                    result = await measure("Courier APIClient", requests, concurrency) { index in
                        let request = APIRequest<Data>.get("", query: [URLQueryItem(name: "key", value: "\(index)")])
                        return try await client.send(request).statusCode == 200
                    }
                }
                results.append(result)
            }
        }
        return results
    }

    /// Keeps `concurrency` requests in flight until `requests` have completed.
    private static func measure(
        _ name: String, _ requests: Int, _ concurrency: Int, _ send: @escaping @Sendable (Int) async throws -> Bool
    ) async -> Result {
        let start = ContinuousClock.now
        let failures = await withTaskGroup(of: Bool.self, returning: Int.self) { group in
            var next = 0
            var failures = 0
            while next < min(concurrency, requests) {
                let index = next
                group.addTask { (try? await send(index)) ?? false }
                next += 1
            }
            while let succeeded = await group.next() {
                if !succeeded { failures += 1 }
                if next < requests {
                    let index = next
                    group.addTask { (try? await send(index)) ?? false }
                    next += 1
                }
            }
            return failures
        }
        return Result(name: name, requests: requests, failures: failures, wall: start.duration(to: .now))
    }
}
