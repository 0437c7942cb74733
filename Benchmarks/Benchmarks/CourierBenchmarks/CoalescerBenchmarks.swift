import Benchmark
import BenchmarkSupport
import Courier
import Foundation

func coalescerBenchmarks() {
    Benchmark("RequestCoalescer: 10,000 joiners on one key", configuration: .init(maxIterations: 20)) { benchmark in
        let coalescer = RequestCoalescer<Int, Int>()
        benchmark.startMeasurement()
        let total = await withTaskGroup(of: Int.self, returning: Int.self) { group in
            for _ in 0..<10_000 {
                group.addTask { (try? await coalescer.run(1) { await Task.yield(); return 1 })?.value ?? 0 }
            }
            return await group.reduce(0, +)
        }
        benchmark.stopMeasurement()
        blackHole(total)
    }

    Benchmark("RequestCoalescer: 1,000 keys x 10 joiners", configuration: .init(maxIterations: 20)) { benchmark in
        let coalescer = RequestCoalescer<Int, Int>()
        benchmark.startMeasurement()
        let total = await withTaskGroup(of: Int.self, returning: Int.self) { group in
            for key in 0..<1_000 {
                for _ in 0..<10 {
                    group.addTask { (try? await coalescer.run(key) { await Task.yield(); return key })?.value ?? 0 }
                }
            }
            return await group.reduce(0, +)
        }
        benchmark.stopMeasurement()
        blackHole(total)
    }
}
