import Benchmark
import BenchmarkSupport
import Courier
import Foundation

private let origin = URL(string: "https://api.example.com")!
private let body = Data(#"{"id":1,"name":"Ada Lovelace"}"#.utf8)

/// A client whose transport answers every GET with a cacheable response.
private func cachingClient(cache: ResponseCache, headers: HeaderFields = ["Cache-Control": "max-age=3600"]) -> APIClient
{
    let upstream = SimulatedUpstream(latency: .zero, body: body)
    struct Cacheable: HTTPTransport {
        let upstream: SimulatedUpstream
        let headers: HeaderFields
        func send(_ request: TransportRequest) async throws -> TransportResponse {
            if request.headers["If-None-Match"] != nil { return TransportResponse(statusCode: 304, headers: headers) }
            return TransportResponse(
                statusCode: 200, headers: headers, body: try await upstream.fetch(request.url.path))
        }
    }
    return APIClient(
        baseURL: origin,
        configuration: .init(
            transport: Cacheable(upstream: upstream, headers: headers), cache: cache, retryPolicy: .never))
}

func cacheBenchmarks() {
    Benchmark("ResponseCache: fresh hit through APIClient", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let client = cachingClient(cache: ResponseCache())
        let request = APIRequest<Data>.get("/items/1")
        _ = try await client.send(request)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await client.send(request).value)
        }
    }

    Benchmark("ResponseCache: miss + store through APIClient", configuration: .init(scalingFactor: .kilo)) {
        benchmark in
        let client = cachingClient(cache: ResponseCache(maxEntries: 100_000))
        let requests = (0..<benchmark.scaledIterations.count).map { APIRequest<Data>.get("/items/\($0)") }
        benchmark.startMeasurement()
        for request in requests {
            blackHole(try await client.send(request).value)
        }
    }

    Benchmark("ResponseCache: 304 merge through APIClient", configuration: .init(scalingFactor: .kilo)) { benchmark in
        // max-age=0 with an ETag: every call is a conditional request answered by 304 and merged.
        let client = cachingClient(cache: ResponseCache(), headers: ["Cache-Control": "max-age=0", "ETag": #""v1""#])
        let request = APIRequest<Data>.get("/items/1")
        _ = try await client.send(request)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await client.send(request).value)
        }
    }

    Benchmark("ResponseCache: store under eviction pressure (100 entries)", configuration: .init(scalingFactor: .kilo))
    {
        benchmark in
        let cache = ResponseCache(maxEntries: 100)
        let now = Date()
        let response = TransportResponse(statusCode: 200, headers: ["Cache-Control": "max-age=60"], body: body)
        let requests = (0..<benchmark.scaledIterations.count).map {
            TransportRequest(url: origin.appendingPathComponent("items/\($0)"))
        }
        benchmark.startMeasurement()
        for request in requests {
            blackHole(await cache.store(response, for: request, partition: nil, requestTime: now, responseTime: now))
        }
    }

    // The disk tier: a fresh hit that reads a file (the memory tier holds one entry, and two URLs alternate, so
    // every call misses memory), and a fresh hit that a disk-backed cache answers from memory.
    Benchmark(
        "ResponseCache: fresh hit from the disk tier through APIClient", configuration: .init(scalingFactor: .kilo)
    ) {
        benchmark in
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bench-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try ResponseCache(directory: directory, maxEntries: 1)
        let client = cachingClient(cache: cache)
        let requests = [APIRequest<Data>.get("/items/1"), APIRequest<Data>.get("/items/2")]
        for request in requests { _ = try await client.send(request) }
        benchmark.startMeasurement()
        for index in benchmark.scaledIterations {
            blackHole(try await client.send(requests[index & 1]).value)
        }
        benchmark.stopMeasurement()
        let reads = await cache.statistics.diskReads
        precondition(reads >= benchmark.scaledIterations.count, "every hit read a file")
    }

    Benchmark(
        "ResponseCache: fresh hit from the memory tier of a disk-backed cache through APIClient",
        configuration: .init(scalingFactor: .kilo)
    ) { benchmark in
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bench-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try ResponseCache(directory: directory)
        let client = cachingClient(cache: cache)
        let request = APIRequest<Data>.get("/items/1")
        _ = try await client.send(request)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await client.send(request).value)
        }
        benchmark.stopMeasurement()
        let reads = await cache.statistics.diskReads
        precondition(reads == 0, "no hit read a file")
    }
}
