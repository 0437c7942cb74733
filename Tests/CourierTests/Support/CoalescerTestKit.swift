import Synchronization
import Testing

@testable import Courier

/// Coordination tools for the `RequestCoalescer` tests: gates, counters and bounded polling, so no test sleeps.
///
/// Namespaced to keep these helpers from colliding with other suites' support types.
enum CoalescerTestKit {
    /// A one-shot latch an operation can wait on until the test opens it.
    ///
    /// Built on an actor rather than `Mutex` because the package still supports platforms without Synchronization.
    actor Gate {
        private var isOpen = false
        private var lastID = 0
        private var waiters: [Int: CheckedContinuation<Bool, Never>] = [:]

        /// Releases every current and future waiter.
        func open() {
            isOpen = true
            let released = waiters
            waiters = [:]
            for waiter in released.values {
                waiter.resume(returning: true)
            }
        }

        /// Returns `true` once the gate is open, or `false` as soon as the waiting task is cancelled.
        func wait() async -> Bool {
            if isOpen { return true }
            lastID += 1
            let id = lastID
            return await withTaskCancellationHandler {
                await withCheckedContinuation { waiter in
                    // Re-checked here, on the actor, so a cancellation that raced ahead is never missed.
                    if Task.isCancelled {
                        waiter.resume(returning: false)
                    } else {
                        waiters[id] = waiter
                    }
                }
            } onCancel: {
                Task { await self.abandon(id) }
            }
        }

        /// Waits until the gate opens, deliberately deaf to cancellation (an operation that ignores it).
        func waitIgnoringCancellation() async {
            if isOpen { return }
            lastID += 1
            let id = lastID
            _ = await withCheckedContinuation { waiters[id] = $0 }
        }

        private func abandon(_ id: Int) {
            waiters.removeValue(forKey: id)?.resume(returning: false)
        }
    }

    /// Counts named events (operation calls, observed cancellations, completions) across tasks.
    actor Tally {
        private var counts: [String: Int] = [:]

        /// Adds one to `event` and returns the new count.
        @discardableResult
        func record(_ event: String) -> Int {
            counts[event, default: 0] += 1
            return counts[event, default: 0]
        }

        /// How many times `event` was recorded.
        func count(_ event: String) -> Int {
            counts[event, default: 0]
        }
    }

    /// The error the test operations throw, carrying which call produced it.
    struct Failure: Error, Equatable {
        let call: Int
    }

    /// Polls `condition` with `Task.yield()` in a bounded loop; returns whether it became true.
    ///
    /// The bound turns a broken invariant into a failed expectation instead of a hung test run.
    static func eventually(_ condition: () async -> Bool) async -> Bool {
        for _ in 0..<200_000 {
            if await condition() { return true }
            await Task.yield()
        }
        return await condition()
    }

    /// Starts `count` callers of `coalescer.run(key, operation:)`, each in its own cancellable task.
    static func spawn<Key, Value>(
        _ count: Int,
        on coalescer: RequestCoalescer<Key, Value>,
        key: Key,
        operation: @escaping @Sendable () async throws -> Value
    ) -> [Task<Coalesced<Value>, any Error>] {
        (0..<count).map { _ in Task { try await coalescer.run(key, operation: operation) } }
    }

    /// Fails the test unless exactly `count` callers end up registered on `coalescer`.
    static func waitForWaiters<Key, Value>(
        _ count: Int,
        on coalescer: RequestCoalescer<Key, Value>,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let reached = await eventually { await coalescer.waiterCount == count }
        try #require(reached, "waiterCount never reached \(count)", sourceLocation: sourceLocation)
    }

    /// Whether `task` ended by throwing `CancellationError`.
    ///
    /// A plain `do`/`catch` on purpose: with thousands of callers, `#expect(throws:)` per caller took ~4 ms each
    /// in debug builds here (5,000 of them: 20 s), so bulk tests count outcomes and expect once.
    static func endedInCancellation<Success>(_ task: Task<Success, any Error>) async -> Bool {
        do {
            _ = try await task.value
            return false
        } catch {
            return error is CancellationError
        }
    }

    /// Expects that nothing leaked: no flight left in the table and no caller left waiting.
    static func expectDrained<Key, Value>(
        _ coalescer: RequestCoalescer<Key, Value>,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        #expect(await coalescer.flightCount == 0, sourceLocation: sourceLocation)
        #expect(await coalescer.waiterCount == 0, sourceLocation: sourceLocation)
        // The count read without the lock went down once for every flight that went up, whichever way it ended.
        #expect(coalescer.census.flights.load(ordering: .relaxed) == 0, sourceLocation: sourceLocation)
    }
}
