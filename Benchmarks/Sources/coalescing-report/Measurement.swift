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

/// A strategy to measure, made where its type is known: its measurement runs `fetch` specialized for that type, as a
/// user's own code calls it (see `FetchStrategy`). Measured through `any FetchStrategy`, every strategy ran generic.
struct Contender {
    let name: String
    private let run:
        (_ variant: Variant, _ callers: Int, _ key: String, _ upstreamCalls: () -> Int) async -> Measurement

    init<Strategy: FetchStrategy>(_ strategy: Strategy) {
        name = strategy.name
        run = { variant, callers, key, upstreamCalls in
            await coalescing_report.measure(
                strategy, variant: variant, callers: callers, key: key, upstreamCalls: upstreamCalls)
        }
    }

    /// ``measure(_:variant:callers:key:upstreamCalls:)`` of the strategy.
    func measure(variant: Variant, callers: Int, key: String, upstreamCalls: () -> Int) async -> Measurement {
        await run(variant, callers, key, upstreamCalls)
    }
}
