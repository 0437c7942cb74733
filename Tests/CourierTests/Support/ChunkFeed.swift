import Foundation

@testable import Courier

/// The body of a streamed test-server reply, fed by the test: each `send` is one chunk, `finish` ends the body.
/// The server's connection thread asks for chunks with ``next()``; when the client goes away, the server cancels
/// that wait, and ``abandoned()`` returns: how a test sees that a client stopped a transfer, without sleeping.
final class ChunkFeed: Sendable {
    private struct State {
        var chunks: [Data] = []
        var finished = false
        var waiter: CheckedContinuation<Data?, Never>?
        var abandoned = false
        var abandonWaiters: [CheckedContinuation<Void, Never>] = []
        var served = 0
    }

    private let state = Locked(State())

    /// Queues one chunk.
    func send(_ chunk: Data) {
        let waiter = state.withLock { state -> CheckedContinuation<Data?, Never>? in
            guard let waiter = state.waiter else {
                state.chunks.append(chunk)
                return nil
            }
            state.waiter = nil
            state.served += chunk.count
            return waiter
        }
        waiter?.resume(returning: chunk)
    }

    /// Queues a UTF-8 chunk.
    func send(_ text: String) { send(Data(text.utf8)) }

    /// Ends the body after the queued chunks.
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<Data?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.chunks.isEmpty ? state.waiter : nil
        }
        waiter?.resume(returning: nil)
    }

    /// Bytes handed to the server so far.
    var served: Int { state.withLock { $0.served } }

    /// The next chunk for the server; nil at the end or once the client went away.
    @Sendable func next() async -> Data? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Data?, Never>) in
                let ready = state.withLock { state -> Data?? in
                    if !state.chunks.isEmpty {
                        let chunk = state.chunks.removeFirst()
                        state.served += chunk.count
                        return .some(chunk)
                    }
                    if state.finished || state.abandoned { return .some(nil) }
                    state.waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let (waiter, waiters) = state.withLock { state in
                state.abandoned = true
                defer {
                    state.waiter = nil
                    state.abandonWaiters = []
                }
                return (state.waiter, state.abandonWaiters)
            }
            waiter?.resume(returning: nil)
            waiters.forEach { $0.resume() }
        }
    }

    /// Returns once the server noticed that the client went away while it waited for a chunk.
    func abandoned() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state in
                if !state.abandoned { state.abandonWaiters.append(continuation) }
                return state.abandoned
            }
            if done { continuation.resume() }
        }
    }
}

extension TestServer {
    /// Serves `path` as a `text/event-stream` fed by `first` on the first connection and by `second` on every later
    /// one: a stream that drops (or falls silent) and the stream its reconnection finds.
    func routeEventStream(_ path: String, first: ChunkFeed, then second: ChunkFeed) {
        let connections = Locked(0)
        route(path) { _ in
            let number = connections.withLock { count in
                count += 1
                return count
            }
            return .streamed(
                headers: [("Content-Type", "text/event-stream")], next: number == 1 ? first.next : second.next)
        }
    }
}
