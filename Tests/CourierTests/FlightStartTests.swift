import Dispatch
import Synchronization
import Testing

@testable import Courier

/// How a flight starts: its task begins on the leader's thread (`Task.immediate`), so a flight costs no hop to start
/// and an operation that answers without suspending never sends its leader back to a queue.
@Suite("RequestCoalescer flight start")
struct FlightStartTests {
    /// Counts the jobs enqueued on it and runs each on a queue of its own; a task that prefers it is enqueued here
    /// every time it is resumed after a suspension.
    private final class CountingExecutor: TaskExecutor {
        private let jobs = Atomic(0)
        private let queue = DispatchQueue(label: "CountingExecutor")

        var enqueued: Int { jobs.load(ordering: .relaxed) }

        func enqueue(_ job: consuming ExecutorJob) {
            jobs.add(1, ordering: .relaxed)
            let job = UnownedJob(job)
            queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }

    @Test func aLeaderWhoseOperationNeverSuspendsIsNeverSentBackToItsExecutor() async throws {
        let coalescer = RequestCoalescer<String, Int>()
        let executor = CountingExecutor()
        // The leader runs on `executor`; the flight's task does not (task executor preferences are not inherited by
        // unstructured tasks). With a flight task that started on another thread, the leader suspended and was
        // enqueued here again to be resumed: two jobs. Started on the leader's thread, the operation answers before
        // the leader ever suspends: the one job that started the task.
        let result = try await Task(executorPreference: executor) {
            try await coalescer.run("k") { 42 }
        }.value
        #expect(result.value == 42)
        #expect(!result.joined)
        #expect(executor.enqueued == 1)
        #expect(await coalescer.reportedOutcomes == 1)
        #expect(await coalescer.flightCount == 0)
    }

    @Test func aFlightThatSuspendsIsKeptWithItsTaskAndCancelledWhenItsLastWaiterLeaves() async throws {
        let coalescer = RequestCoalescer<String, Int>()
        let (started, never, tally) = (Kit.Gate(), Kit.Gate(), Kit.Tally())
        let leader = Task {
            try await coalescer.run("k") {
                await started.open()
                // Suspends until cancelled: only the task kept in the table can end it.
                guard await never.wait() else {
                    await tally.record("cancelled")
                    throw CancellationError()
                }
                return 1
            }
        }
        _ = await started.wait()
        try await Kit.waitForWaiters(1, on: coalescer)
        leader.cancel()
        await #expect(throws: CancellationError.self) { try await leader.value }
        // The flight's task was attached after it first suspended; abandoning the flight cancelled it, so its wait
        // ended and it reported.
        let reported = await Kit.eventually { await coalescer.reportedOutcomes == 1 }
        #expect(reported)
        #expect(await tally.count("cancelled") == 1)
        await Kit.expectDrained(coalescer)
    }
}

private typealias Kit = CoalescerTestKit
