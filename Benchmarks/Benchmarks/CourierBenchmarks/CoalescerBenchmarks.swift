import Benchmark
import BenchmarkSupport
import Courier
import Foundation

/// Callers are unstructured tasks, as independent callers are: with a task group, the group's own bookkeeping
/// when thousands of children finish at once dominated the measurement (see Docs/Benchmarks.md).
private func callers<Value: Sendable>(
    _ count: Int, _ body: @escaping @Sendable (Int) async -> Value
) async -> [Value] {
    let tasks = (0..<count).map { index in Task { await body(index) } }
    var values: [Value] = []
    values.reserveCapacity(count)
    for task in tasks { values.append(await task.value) }
    return values
}

func coalescerBenchmarks() {
    Benchmark("RequestCoalescer: 10,000 joiners on one key", configuration: .init(maxIterations: 20)) { benchmark in
        let coalescer = RequestCoalescer<Int, Int>()
        benchmark.startMeasurement()
        let values = await callers(10_000) { _ in
            let result = try? await coalescer.run(1) {
                try await Task.sleep(for: .milliseconds(1))
                return 1
            }
            return result?.value ?? 0
        }
        benchmark.stopMeasurement()
        blackHole(values)
    }

    Benchmark("RequestCoalescer: 1,000 keys x 10 joiners", configuration: .init(maxIterations: 20)) { benchmark in
        let coalescer = RequestCoalescer<Int, Int>()
        benchmark.startMeasurement()
        let values = await callers(10_000) { index in
            let key = index / 10
            let result = try? await coalescer.run(key) {
                try await Task.sleep(for: .milliseconds(1))
                return key
            }
            return result?.value
        }
        benchmark.stopMeasurement()
        blackHole(values)
    }
}
