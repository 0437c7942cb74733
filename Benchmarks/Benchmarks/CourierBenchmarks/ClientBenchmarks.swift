import Benchmark
import BenchmarkSupport
import Courier
import Foundation

private struct Item: Decodable {
    let id: Int
    let name: String
}

func clientBenchmarks() {
    Benchmark("APIClient: one GET end to end, simulated transport", configuration: .init(scalingFactor: .kilo)) {
        benchmark in
        let upstream = SimulatedUpstream(latency: .zero)
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(transport: SimulatedTransport(upstream: upstream), retryPolicy: .never))
        let request = APIRequest<Item>.get("/items/1")
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await client.send(request).value)
        }
    }

    Benchmark("APIClient: 1,000 concurrent GETs of one key, 1 ms upstream", configuration: .init(maxIterations: 50)) {
        benchmark in
        let upstream = SimulatedUpstream(latency: .milliseconds(1))
        let client = APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(transport: SimulatedTransport(upstream: upstream), retryPolicy: .never))
        let request = APIRequest<Data>.get("/items/1")
        benchmark.startMeasurement()
        let tasks = (0..<1_000).map { _ in Task { try? await client.send(request).value } }
        for task in tasks { blackHole(await task.value) }
    }
}
