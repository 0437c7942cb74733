import Foundation

/// Lets at most `limit` requests per host into URLSession at once and queues the rest in Courier, in arrival
/// order, so that a caller who leaves while queued is dropped before URLSession ever sees its request.
///
/// Why: URLSession on Linux hands every task to libcurl, which opens at most `httpMaximumConnectionsPerHost`
/// connections to a host (`CURLMOPT_MAX_HOST_CONNECTIONS`) and parks the other tasks in a queue of its own.
/// Cancelling a task is asynchronous (it is processed later on the session's queue), and each cancelled
/// *running* task frees a connection that libcurl gives at once to the next parked task. So when many callers
/// leave together, parked requests are started, and sent, before their own cancellation is processed: 12 POSTs
/// to a silent server with 6 connections, all cancelled at once, reached the server 12 times out of 12.
///
/// With the gate, URLSession never holds more tasks for a host than it opens connections for, so nothing is
/// parked inside it: a request is either queued here, where cancelling removes it synchronously, or already on
/// its way to the wire. A slot is held until URLSession reports the task complete (not merely until its caller
/// left), which is when libcurl has released the connection.
///
/// - Important: The count is per transport. A session shared with other code, or a proxy (libcurl then counts
///   connections to the proxy, for every host behind it), can make libcurl park requests again.
final class ConnectionGate: Sendable {
    /// The most requests of one host inside URLSession at once.
    let limit: Int
    private let state = Locked(State())

    /// - Parameter limit: The session's `httpMaximumConnectionsPerHost` (at least 1 is used).
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// The key libcurl counts connections by: host and port, the port defaulted from the scheme.
    static func key(for url: URL?) -> String {
        let scheme = url?.scheme?.lowercased() ?? "http"
        let port = url?.port ?? (scheme == "https" ? 443 : 80)
        return "\(url?.host?.lowercased() ?? ""):\(port)"
    }

    /// Waits, in arrival order, for a slot for `host`. Pair every successful call with ``leave(_:)``.
    ///
    /// - Parameters:
    ///   - host: The key of the host (see ``key(for:)``).
    ///   - stop: Ends the wait when the attempt's deadline passes.
    /// - Throws: `CancellationError` if the calling task is cancelled before it gets a slot, or the stop's error;
    ///   it then holds none.
    func enter(_ host: String, stop: AttemptStop? = nil) async throws {
        let id = state.withLock { state in
            state.nextID &+= 1
            return state.nextID
        }
        defer { stop?.unwatch() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let admitted: Bool? = state.withLock { state in
                    // Checked under the lock that the cancellation handler takes too: either it finds this
                    // waiter queued, or the flag is already visible here.
                    guard !Task.isCancelled else { return nil }
                    return state.hosts[host, default: Queue()].admit(id, continuation, limit: limit)
                }
                switch admitted {
                case true?: continuation.resume()
                case nil: continuation.resume(throwing: CancellationError())
                case false?: wait(id, for: host, until: stop)
                }
            }
        } onCancel: {
            let waiter = state.withLock { $0.hosts[host]?.remove(id) }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Lets the attempt's deadline take a queued waiter out of the queue, as its cancellation would.
    private func wait(_ id: UInt64, for host: String, until stop: AttemptStop?) {
        let leave: @Sendable (any Error) -> Void = { [state] error in
            let waiter = state.withLock { $0.hosts[host]?.remove(id) }
            waiter?.resume(throwing: error)
        }
        if let reason = stop?.watch(leave) { leave(reason) }
    }

    /// Gives the slot back: to the longest-waiting request for `host`, if there is one.
    func leave(_ host: String) {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            let next = state.hosts[host]?.release()
            if state.hosts[host]?.isIdle == true { state.hosts[host] = nil }
            return next
        }
        next?.resume()
    }

    /// Requests inside URLSession and requests queued here, for `host` (for tests).
    func counts(for host: String) -> (admitted: Int, queued: Int) {
        state.withLock { state in
            let queue = state.hosts[host]
            return (queue?.admitted ?? 0, queue?.waiters.count ?? 0)
        }
    }

    private struct State {
        var hosts: [String: Queue] = [:]
        var nextID: UInt64 = 0
    }

    /// One host's slots and waiters. Waiters are found by id (a cancelled one leaves in O(1)); `order` keeps
    /// arrival order and skips ids that already left.
    private struct Queue {
        var admitted = 0
        var waiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        var order: [UInt64] = []
        var head = 0

        var isIdle: Bool { admitted == 0 && waiters.isEmpty }

        mutating func admit(_ id: UInt64, _ continuation: CheckedContinuation<Void, any Error>, limit: Int) -> Bool {
            if admitted < limit, waiters.isEmpty {
                admitted += 1
                return true
            }
            waiters[id] = continuation
            order.append(id)
            return false
        }

        mutating func remove(_ id: UInt64) -> CheckedContinuation<Void, any Error>? {
            waiters.removeValue(forKey: id)
        }

        /// The next waiter, who takes over the slot; or nil, and the slot is free.
        mutating func release() -> CheckedContinuation<Void, any Error>? {
            while head < order.count {
                let id = order[head]
                head += 1
                if let next = waiters.removeValue(forKey: id) {
                    compact()
                    return next
                }
            }
            order.removeAll(keepingCapacity: true)
            head = 0
            admitted -= 1
            return nil
        }

        /// Drops the consumed front of `order` once it is at least half of it, so the array stays O(waiters).
        private mutating func compact() {
            guard head >= 64, head * 2 >= order.count else { return }
            order.removeFirst(head)
            head = 0
        }
    }
}
