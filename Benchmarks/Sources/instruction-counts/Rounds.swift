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

    /// The rounds of `scenario`: `joiners` (Courier), `actor-joiners` (a hand-written coalescer) or `empty-tasks`
    /// (the same tasks without either).
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
        case .actorJoiners:
            let transport = GatedTransport(response: Scenario.response())
            let request = TransportRequest(url: Scenario.baseURL.appending(path: "items/1"))
            let decoder = JSONDecoder()
            let coalescer = TaskDictionaryCoalescer<SampleItem> { _ in
                try decoder.decode(SampleItem.self, from: try await transport.send(request).body)
            }
            body = {
                _ = try await coalescer.fetch("/items/1")
                return false
            }
            release = { transport.release() }
            verify = { rounds in
                try expect(transport.callCount == rounds, "\(transport.callCount) upstream calls in \(rounds) rounds")
            }
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
