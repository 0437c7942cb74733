import Benchmark
import BenchmarkSupport
import Courier
import Foundation

/// Allocation counts are thresholded in CI (Thresholds/, within 10% at p90); times are reported, never asserted.
let metrics: [BenchmarkMetric] = [.wallClock, .cpuTotal, .mallocCountTotal, .throughput]

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: metrics, timeUnits: .microseconds, maxDuration: .seconds(2), maxIterations: 1_000,
        thresholds: [.mallocCountTotal: .init(relative: [.p90: 10])])

    coalescerBenchmarks()
    clientBenchmarks()
    cacheBenchmarks()
    refreshBenchmarks()
    eventBenchmarks()
}
