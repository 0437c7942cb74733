import Dispatch
import Synchronization

/// A task executor whose jobs run on the thread that calls ``runUntilIdle()``, so that thread knows when every task
/// that prefers this executor is suspended: nothing is queued and nothing runs.
///
/// The joiners scenario needs that moment: when the thread finds the queue empty after starting its callers, each of
/// them has reached the coalescer and waits there (the first one leads the flight, held at the transport), so all of
/// them join. Work the runtime sends to other executors (a flight task, a timer) runs on the global pool as usual.
final class ThreadExecutor: TaskExecutor {
    /// The jobs in `slots[head..<tail]`; slots past `tail` are reused, never removed. Emptying the array when the queue
    /// drained cost time in proportion to the jobs since the last drain, and how often the queue drains depends on how
    /// the other threads run: in the joiners' rounds it moved the counts of one build by hundreds of instructions per
    /// caller from one run to the next (session 19).
    private struct Queue {
        var slots: [UnownedJob] = []
        var head = 0
        var tail = 0
        /// Whether the driving thread waits for work: only then does a job or a wake signal it. A signal for every job
        /// made it loop through the empty queue once per job it had already run, as many times as the other threads
        /// happened to enqueue while it ran (about 160 instructions per caller of one build, from run to run).
        var isWaiting = false

        mutating func push(_ job: UnownedJob) {
            if tail < slots.count { slots[tail] = job } else { slots.append(job) }
            tail += 1
        }

        /// Whether the driving thread waits, which it no longer does once told.
        mutating func takeWaiting() -> Bool {
            defer { isWaiting = false }
            return isWaiting
        }

        mutating func pop() -> UnownedJob? {
            guard head < tail else {
                head = 0
                tail = 0
                return nil
            }
            defer { head += 1 }
            return slots[head]
        }
    }

    private let queue = Mutex(Queue())
    private let wakeups = DispatchSemaphore(value: 0)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let wasWaiting = queue.withLock { queue in
            queue.push(job)
            return queue.takeWaiting()
        }
        if wasWaiting { wakeups.signal() }
    }

    /// Runs queued jobs, and the jobs they queue, until none is left.
    func runUntilIdle() {
        while let job = queue.withLock({ $0.pop() }) {
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// Blocks until a job is queued or ``wake()`` is called; returns at once when a job is queued already.
    func waitForWork() {
        let mustWait = queue.withLock { queue in
            guard queue.head == queue.tail else { return false }
            queue.isWaiting = true
            return true
        }
        if mustWait { wakeups.wait() }
    }

    /// Ends a ``waitForWork()``: a task calls it when it finishes, so the driving thread rechecks its condition.
    func wake() {
        if queue.withLock({ $0.takeWaiting() }) { wakeups.signal() }
    }
}
