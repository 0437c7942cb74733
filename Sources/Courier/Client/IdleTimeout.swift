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

/// Hands the chunks of a source stream to one reader, one at a time, each wait racing a deadline. The state is a
/// short critical section; continuations are resumed and tasks cancelled after it.
private final class IdleTimeoutRelay: Sendable {
    private struct State {
        /// The reader waiting for a chunk, with the deadline of its wait.
        var reader: (continuation: CheckedContinuation<Data?, any Error>, deadline: UInt64)?
        /// How the stream ended; every later read gets the same.
        var end: Result<Void, any Error>?
        /// The task that reads the source, started by the first read.
        var reading: Task<Void, Never>?
    }

    private let source: ByteStream
    private let timeout: Duration
    /// When every wait must be over, and the call timeout that set it.
    private let end: (at: Duration, callTimeout: Duration)?
    private let scheduler: DeadlineScheduler
    private let state = Locked(State())
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
                let ended = state.withLock { state -> Result<Void, any Error>? in
                    if let end = state.end { return end }
                    // Scheduled inside the lock: the scheduler never calls back while holding its own, and a
                    // deadline that fires at once then finds the reader in place.
                    let deadline = scheduler.schedule(at: due()) { [weak self] in self?.expire() }
                    state.reader = (continuation, deadline)
                    if state.reading == nil { state.reading = Task { await self.readSource() } }
                    return nil
                }
                switch ended {
                case nil: demand.yield()
                case .success?: continuation.resume(returning: nil)
                case .failure(let error)?: continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            stop(with: CancellationError())
        }
    }

    /// Ends the stream with `error` (unless it already ended): the waiting reader gets it and the transfer stops.
    func stop(with error: any Error) {
        let (reader, reading) = state.withLock {
            state -> (CheckedContinuation<Data?, any Error>?, Task<Void, Never>?) in
            guard state.end == nil else { return (nil, nil) }
            state.end = .failure(error)
            defer { state.reader = nil }
            if let deadline = state.reader?.deadline { scheduler.cancel(deadline) }
            return (state.reader?.continuation, state.reading)
        }
        demand.finish()
        reading?.cancel()
        reader?.resume(throwing: error)
    }

    /// When the wait that starts now must end: `timeout` from now, cut to the call's end.
    private func due() -> Duration {
        let idle = scheduler.elapsed.saturatingAdding(timeout)
        guard let end else { return idle }
        return min(idle, end.at)
    }

    /// The deadline of the current wait passed: the call's end when it has come, else the idle timeout.
    private func expire() {
        if let end, scheduler.elapsed >= end.at {
            stop(with: APIError.timedOut(end.callTimeout))
        } else {
            stop(with: APIError.timedOut(timeout))
        }
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

    /// Hands what the source produced to the waiting reader, unless the wait already ended.
    private func deliver(_ result: Result<Data?, any Error>) {
        let reader = state.withLock { state -> CheckedContinuation<Data?, any Error>? in
            guard state.end == nil, let reader = state.reader else { return nil }
            state.reader = nil
            scheduler.cancel(reader.deadline)
            switch result {
            case .success(.some): break
            case .success(.none): state.end = .success(())
            case .failure(let error): state.end = .failure(error)
            }
            return reader.continuation
        }
        reader?.resume(with: result)
    }
}
