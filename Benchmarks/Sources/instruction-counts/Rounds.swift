import BenchmarkSupport
import Courier
import Dispatch
import Foundation
import Synchronization

/// Rounds of concurrent callers of one key, driven from the calling thread through a ``ThreadExecutor``.
///
/// A round starts every caller as a task on the executor and runs them until all are suspended: the first leads the
/// flight, which the ``GatedTransport`` holds, and the rest have joined it. Then the transport lets the flight
/// through and the thread runs the callers to the end. Whatever the scheduler does, every round has exactly one
/// leader, and the round fails if any caller did not join.
struct Rounds {
    let callers: Int
    private let executor = ThreadExecutor()
    private let body: @Sendable () async throws -> Bool
    private let release: @Sendable () -> Void
    private let verify: @Sendable (_ rounds: Int) throws -> Void
    /// Whether every caller but one must report that it joined.
    private let expectsJoiners: Bool

    /// The rounds of `scenario`: `joiners` (Courier), `actor-joiners` and `cancellable-joiners` (hand-written
    /// coalescers) or `empty-tasks` (the same tasks without any).
    init(_ scenario: Scenario, callers: Int) {
        self.callers = callers
        switch scenario {
        case .joiners, .cachedJoiners:
            let cached = scenario == .cachedJoiners
            let transport = GatedTransport(response: Scenario.response(cacheControl: cached ? "no-store" : nil))
            let cache = cached ? ResponseCache() : nil
            let client = APIClient(baseURL: Scenario.baseURL, configuration: .init(transport: transport, cache: cache))
            let request = APIRequest<SampleItem>.get("/items/1")
            body = { try await client.send(request).joined }
            release = { transport.release() }
            verify = { rounds in
                try expect(transport.callCount == rounds, "\(transport.callCount) upstream calls in \(rounds) rounds")
                guard let cache else { return }
                // Every joiner skipped its lookup: one miss looked up per round (its leader's), the rest proven.
                let proven = waitFor { await cache.statistics.misses } - rounds
                try expect(
                    proven == rounds * (callers - 1), "\(proven) joiners of \(rounds) rounds skipped their lookup")
            }
            expectsJoiners = true
        case .actorJoiners, .cancellableJoiners:
            let transport = GatedTransport(response: Scenario.response())
            let request = TransportRequest(url: Scenario.baseURL.appending(path: "items/1"))
            let decoder = JSONDecoder()
            let upstream: @Sendable (String) async throws -> SampleItem = { _ in
                try decoder.decode(SampleItem.self, from: try await transport.send(request).body)
            }
            let upstreamCalls: @Sendable (Int) throws -> Void = { rounds in
                try expect(transport.callCount == rounds, "\(transport.callCount) upstream calls in \(rounds) rounds")
            }
            // Each coalescer is called with its concrete type, so that its `fetch` is specialized as a user's is.
            if scenario == .actorJoiners {
                let coalescer = TaskDictionaryCoalescer(upstream: upstream)
                body = {
                    _ = try await coalescer.fetch("/items/1")
                    return false
                }
                verify = upstreamCalls
            } else {
                let coalescer = CancellableCoalescer(upstream: upstream)
                body = {
                    _ = try await coalescer.fetch("/items/1")
                    return false
                }
                verify = { rounds in
                    try upstreamCalls(rounds)
                    // The guarantee this baseline is measured for, checked once it was measured.
                    try expect(
                        waitFor { await cancelledCallerLeavesWhileTheFlightIsHeld(coalescer, transport) },
                        "a cancelled caller of the cancellable coalescer did not leave before its flight answered")
                }
            }
            release = { transport.release() }
            expectsJoiners = false
        default:
            body = { false }
            release = {}
            verify = { _ in }
            expectsJoiners = false
        }
    }

    /// Runs one round and checks that it had one leader and `callers - 1` joiners.
    func run() throws {
        let tally = Tally()
        for _ in 0..<callers {
            Task(executorPreference: executor) { [body, executor] in
                do {
                    if try await body() { tally.joined.add(1, ordering: .relaxed) }
                } catch {
                    tally.failed.add(1, ordering: .relaxed)
                }
                tally.finished.add(1, ordering: .relaxed)
                executor.wake()
            }
        }
        executor.runUntilIdle()
        release()
        while tally.finished.load(ordering: .relaxed) < callers {
            executor.waitForWork()
            executor.runUntilIdle()
        }
        let failed = tally.failed.load(ordering: .relaxed)
        let joined = tally.joined.load(ordering: .relaxed)
        try expect(failed == 0, "\(failed) of \(callers) callers failed")
        try expect(
            !expectsJoiners || joined == callers - 1, "\(joined) of \(callers) callers joined, not \(callers - 1)")
    }

    /// Checks the upstream calls after `rounds` rounds (warm-up included).
    func verify(rounds: Int) throws {
        try verify(rounds)
    }
}

/// What the callers of one round report.
private final class Tally: Sendable {
    let finished = Atomic(0)
    let joined = Atomic(0)
    let failed = Atomic(0)
}

/// What `read` returns, read in a task of its own while this thread waits: the rounds' checks run on the thread that
/// drove them, outside any task.
private func waitFor<Value: Sendable>(_ read: @escaping @Sendable () async -> Value) -> Value {
    let done = DispatchSemaphore(value: 0)
    let result = Mutex<Value?>(nil)
    Task.detached {
        let value = await read()
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    return result.withLock { $0! }
}

/// Whether a caller of `coalescer` that is cancelled while its flight is held in `transport` leaves with
/// `CancellationError` before the flight answers, while the caller beside it gets the answer. Bounded: each wait gives
/// up after 10,000 turns of the executor, and the flight is let through whether the leaving caller ended or not.
private func cancelledCallerLeavesWhileTheFlightIsHeld(
    _ coalescer: CancellableCoalescer<SampleItem>, _ transport: GatedTransport
) async -> Bool {
    let calls = transport.callCount
    let staying = Task { try await coalescer.fetch("/check") }
    for _ in 0..<10_000 where transport.callCount == calls { await Task.yield() }
    let left = Atomic(false)
    let leaving = Task {
        defer { left.store(true, ordering: .relaxed) }
        _ = try await coalescer.fetch("/check")
    }
    // Cancelled once it waits: a caller cancelled before it registers never waits at all.
    for _ in 0..<10_000 where coalescer.waiterCount(for: "/check") < 2 { await Task.yield() }
    leaving.cancel()
    for _ in 0..<10_000 where !left.load(ordering: .relaxed) { await Task.yield() }
    let leftFirst = left.load(ordering: .relaxed)
    transport.release()
    let leftCancelled: Bool
    do {
        try await leaving.value
        leftCancelled = false
    } catch {
        leftCancelled = error is CancellationError
    }
    let stayed = (try? await staying.value) != nil
    return transport.callCount == calls + 1 && leftFirst && leftCancelled && stayed
}
