import BenchmarkSupport
import Foundation
import MallocInterposerSwift

/// One run of one strategy at one level.
struct Measurement {
    let variant: Variant
    let strategy: String
    let callers: Int
    let upstreamCalls: Int
    let failures: Int
    let wall: Duration
    let latency: LatencySummary
    let allocationsPerCaller: Double
}

/// Fires `callers` concurrent fetches of one key and measures them.
func measure(
    _ strategy: some FetchStrategy, variant: Variant, callers: Int, key: String, upstreamCalls: () -> Int
) async -> Measurement {
    let callsBefore = upstreamCalls()
    let allocationsBefore = MallocInterposerSwift.getStatistics().mallocCount
    let start = ContinuousClock.now
    // Independent unstructured tasks, as independent callers are. A task group was tried first: when thousands of
    // children finish in the same instant its bookkeeping, not the strategy, dominated the wall time (0.2-0.5 s for
    // 10,000 children against 0.06 s for the same work in unstructured tasks).
    let tasks = (0..<callers).map { _ in
        Task {
            let began = ContinuousClock.now
            let succeeded = (try? await strategy.fetch(key)) != nil
            return (began.duration(to: .now), succeeded)
        }
    }
    var outcomes: [(Duration, Bool)] = []
    outcomes.reserveCapacity(callers)
    for task in tasks { outcomes.append(await task.value) }
    let wall = start.duration(to: .now)
    let allocations = MallocInterposerSwift.getStatistics().mallocCount - allocationsBefore
    return Measurement(
        variant: variant, strategy: strategy.name, callers: callers, upstreamCalls: upstreamCalls() - callsBefore,
        failures: outcomes.filter { !$0.1 }.count, wall: wall, latency: LatencySummary(outcomes.map(\.0)),
        allocationsPerCaller: Double(allocations) / Double(callers))
}
