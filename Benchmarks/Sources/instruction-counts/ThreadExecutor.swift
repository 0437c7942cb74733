import Dispatch
import Synchronization

/// A task executor whose jobs run on the thread that calls ``runUntilIdle()``, so that thread knows when every task
/// that prefers this executor is suspended: nothing is queued and nothing runs.
///
/// The joiners scenario needs that moment: when the thread finds the queue empty after starting its callers, each of
/// them has reached the coalescer and waits there (the first one leads the flight, held at the transport), so all of
/// them join. Work the runtime sends to other executors (a flight task, a timer) runs on the global pool as usual.
final class ThreadExecutor: TaskExecutor {
    private struct Queue {
        var jobs: [UnownedJob] = []
        var head = 0

        mutating func pop() -> UnownedJob? {
            guard head < jobs.count else {
                jobs.removeAll(keepingCapacity: true)
                head = 0
                return nil
            }
            defer { head += 1 }
            return jobs[head]
        }
    }

    private let queue = Mutex(Queue())
    private let wakeups = DispatchSemaphore(value: 0)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.withLock { $0.jobs.append(job) }
        wakeups.signal()
    }

    /// Runs queued jobs, and the jobs they queue, until none is left.
    func runUntilIdle() {
        while let job = queue.withLock({ $0.pop() }) {
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// Blocks until a job is queued or ``wake()`` is called (or returns at once if that happened since the last
    /// wait).
    func waitForWork() {
        wakeups.wait()
    }

    /// Ends a ``waitForWork()``: a task calls it when it finishes, so the driving thread rechecks its condition.
    func wake() {
        wakeups.signal()
    }
}
