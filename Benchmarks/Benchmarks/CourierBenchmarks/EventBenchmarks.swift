import Benchmark
import BenchmarkSupport
import Courier
import Foundation

func eventBenchmarks() {
    let emits = Benchmark.Configuration(timeUnits: .nanoseconds, scalingFactor: .mega, maxIterations: 20)

    // The cost every step of every call pays when nobody listens: one lock read, no event built.
    Benchmark("EventLog: emit, no subscriber", configuration: emits) { benchmark in
        let log = EventLog()
        let id = CallID(rawValue: 1)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            log.emit(id, .requestStarted(method: .get, url: "https://api.example.com/items/1"))
        }
    }

    // Two subscribers draining as fast as they can: the event is built, timed and yielded twice.
    Benchmark("EventLog: emit, 2 subscribers reading", configuration: emits) { benchmark in
        let log = EventLog()
        let readers = (0..<2).map { _ in
            let events = log.subscribe()
            return Task { for await event in events { blackHole(event) } }
        }
        let id = CallID(rawValue: 1)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            log.emit(id, .requestStarted(method: .get, url: "https://api.example.com/items/1"))
        }
        benchmark.stopMeasurement()
        for reader in readers { reader.cancel() }
    }

    // Two subscribers that never read: every emit drops the oldest buffered event of each.
    Benchmark("EventLog: emit, 2 subscribers never reading", configuration: emits) { benchmark in
        let log = EventLog()
        let subscribers = (0..<2).map { _ in log.subscribe() }
        let id = CallID(rawValue: 1)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            log.emit(id, .requestStarted(method: .get, url: "https://api.example.com/items/1"))
        }
        benchmark.stopMeasurement()
        blackHole(subscribers)
    }

    // Request latency with and without a subscriber that never reads: the buffer fills, then drops; calls go on.
    for listening in [false, true] {
        let name =
            "EventLog: APIClient GET end to end, \(listening ? "a subscriber that never reads" : "no subscriber")"
        Benchmark(name, configuration: .init(scalingFactor: .kilo)) { benchmark in
            let client = APIClient(
                baseURL: URL(string: "https://api.example.com")!,
                configuration: .init(
                    transport: SimulatedTransport(upstream: SimulatedUpstream(latency: .zero)), retryPolicy: .never))
            let events = listening ? client.events : nil
            let request = APIRequest<Data>.get("/items/1")
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try await client.send(request).value)
            }
            benchmark.stopMeasurement()
            blackHole(events)
        }
    }
}
