import Foundation

extension ByteStream {
    /// The same chunks, with each wait for the next one bounded by `timeout` on `scheduler`'s clock: an idle
    /// timeout, started when the reader asks for a chunk and stopped when one (or the end) arrives, so a slow reader
    /// is never timed out, only a silent server. When it passes, the reader gets ``APIError/timedOut(_:)`` at once
    /// and the transfer is stopped.
    ///
    /// Why a relay task: the wait happens inside the transport's own `next()`, in the reader's task, and nothing
    /// outside that task can make it return except cancelling it, which would cancel the caller too. So the chunks
    /// are read by one task per stream (never one per chunk) that reads only when the reader asks, holding at most
    /// the one chunk in flight; the reader waits on a continuation that either the chunk or the deadline resumes,
    /// and a deadline cancels the relay task, which stops the transfer as a cancelled reader would.
    ///
    /// With an `end` (the call's ``CallLimits/end``, from its `callTimeout`), no wait goes past it: a body whose
    /// chunks keep coming for ever (an endless download) still ends there, with ``APIError/timedOut(_:)`` carrying
    /// `callTimeout`. Only waits are bounded, so a reader that has stopped asking is never failed, it is told when it
    /// asks next.
    func idleTimeout(
        _ timeout: Duration, end: Duration? = nil, callTimeout: Duration? = nil, scheduler: DeadlineScheduler
    ) -> ByteStream {
        let relay = IdleTimeoutRelay(
            source: self, timeout: timeout, end: end.map { ($0, callTimeout ?? timeout) }, scheduler: scheduler)
        let reader = IdleTimeoutReader(relay)
        return ByteStream(next: { try await reader.next() })
    }
}

/// The reader's handle on a relay: when every copy of the stream is released, the relay stops (and with it the
/// transfer), as a body let go unread does without an idle timeout.
private final class IdleTimeoutReader: Sendable {
    let relay: IdleTimeoutRelay
    init(_ relay: IdleTimeoutRelay) { self.relay = relay }
    func next() async throws -> Data? { try await relay.next() }
    deinit { relay.stop(with: CancellationError()) }
}

/// Hands the chunks of a source stream to one reader, one at a time, each wait racing a deadline. The state is an
/// ``IdleTimeoutStateMachine`` behind a lock; continuations are resumed, timers set and tasks cancelled after it.
private final class IdleTimeoutRelay: Sendable {
    private typealias Machine = IdleTimeoutStateMachine<CheckedContinuation<Data?, any Error>, Task<Void, Never>>

    private let source: ByteStream
    private let timeout: Duration
    /// When every wait must be over, and the call timeout that set it.
    private let end: (at: Duration, callTimeout: Duration)?
    private let scheduler: DeadlineScheduler
    private let state = Locked(Machine())
    /// One element per read the reader asks for; the relay task reads a chunk for each.
    private let demands: AsyncStream<Void>
    private let demand: AsyncStream<Void>.Continuation

    init(
        source: ByteStream, timeout: Duration, end: (at: Duration, callTimeout: Duration)?, scheduler: DeadlineScheduler
    ) {
        self.source = source
        self.timeout = timeout
        self.end = end
        self.scheduler = scheduler
        (demands, demand) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .unbounded)
    }

    func next() async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
                switch state.withLock({ $0.read(continuation) }) {
                case .resume(let reader, let result):
                    reader.resume(with: result)
                case .wait(let wait, let startRelay):
                    // The timer is set after the critical section: one that fires at once, or a chunk that comes
                    // first, finds the wait by its number, and `armed` cancels a timer whose wait is already over.
                    let timer = scheduler.schedule(at: due()) { [weak self] in self?.expire(wait) }
                    if let over = state.withLock({ $0.armed(wait, timer: timer) }) { scheduler.cancel(over) }
                    if startRelay {
                        let task = Task { await self.readSource() }
                        state.withLock { $0.relayStarted(task) }?.cancel()
                    }
                    demand.yield()
                }
            }
        } onCancel: {
            stop(with: CancellationError())
        }
    }

    /// Ends the stream with `error` (unless it already ended): the waiting reader gets it and the transfer stops.
    func stop(with error: any Error) {
        apply(state.withLock { $0.stop(with: error) }, error)
    }

    private func apply(_ action: Machine.StopAction, _ error: any Error) {
        guard case .stop(let reader, let timer, let relay) = action else { return }
        if let timer { scheduler.cancel(timer) }
        demand.finish()
        relay?.cancel()
        reader?.resume(throwing: error)
    }

    /// When the wait that starts now must end: `timeout` from now, cut to the call's end.
    private func due() -> Duration {
        let idle = scheduler.elapsed.saturatingAdding(timeout)
        guard let end else { return idle }
        return min(idle, end.at)
    }

    /// The deadline of `wait` passed: the call's end when it has come, else the idle timeout. Applies only if that
    /// wait is still open (see ``IdleTimeoutStateMachine``).
    private func expire(_ wait: Machine.Wait) {
        let error: any Error
        if let end, scheduler.elapsed >= end.at {
            error = APIError.timedOut(end.callTimeout)
        } else {
            error = APIError.timedOut(timeout)
        }
        apply(state.withLock { $0.expire(wait, with: error) }, error)
    }

    /// The relay task: reads one chunk per demand, until the source ends or the relay is stopped.
    private func readSource() async {
        for await _ in demands {
            let result: Result<Data?, any Error>
            do {
                result = .success(try await source.nextChunk())
            } catch {
                result = .failure(error)
            }
            deliver(result)
            guard case .success(.some) = result else { return }
        }
    }

    /// Hands what the source produced to the waiting reader, unless the stream already ended.
    private func deliver(_ result: Result<Data?, any Error>) {
        guard case .resume(let reader, let result, let timer) = state.withLock({ $0.deliver(result) }) else { return }
        if let timer { scheduler.cancel(timer) }
        reader.resume(with: result)
    }
}
