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

    /// A number for one request's place in the queues: pass it to ``admit(_:id:start:)`` and ``withdraw(_:id:)``.
    func makeID() -> UInt64 {
        state.withLock { state in
            state.nextID &+= 1
            return state.nextID
        }
    }

    /// Takes a slot for `host` now, or queues `start` to run when a slot is handed to this request.
    ///
    /// A queued `start` runs on the thread that frees the slot (the one calling ``leave(_:)``), outside the lock: the
    /// slot passes straight to the next request's work, and no task is woken only to start it. Pair every admission
    /// with one ``leave(_:)``; a request withdrawn while queued was never admitted.
    ///
    /// - Returns: `true` when the slot is taken now: the caller starts the request itself and `start` is dropped.
    func admit(_ host: String, id: UInt64, start: @escaping Start) -> Bool {
        state.withLock { $0.hosts[host, default: Queue()].admit(id, start, limit: limit) }
    }

    /// Takes a queued request out because its caller left. Does nothing when it was already admitted (its start
    /// then finds the caller gone and gives the slot back) or was never queued.
    ///
    /// - Returns: `true` when it was queued: its start will never run.
    @discardableResult
    func withdraw(_ host: String, id: UInt64) -> Bool {
        state.withLock { state in
            let removed = state.hosts[host]?.remove(id) != nil
            if state.hosts[host]?.isIdle == true { state.hosts[host] = nil }
            return removed
        }
    }

    /// Gives the slot back: to the longest-waiting request for `host`, if there is one.
    func leave(_ host: String) {
        let next = state.withLock { state -> Start? in
            let next = state.hosts[host]?.release()
            if state.hosts[host]?.isIdle == true { state.hosts[host] = nil }
            return next
        }
        next?()
    }

    /// Requests inside URLSession and requests queued here, for `host` (for tests).
    func counts(for host: String) -> (admitted: Int, queued: Int) {
        state.withLock { state in
            let queue = state.hosts[host]
            return (queue?.admitted ?? 0, queue?.waiters.count ?? 0)
        }
    }

    /// How many entries `host`'s arrival order holds, withdrawn ones included (for tests: it must stay
    /// proportional to the requests queued, whoever left).
    func arrivalOrderCount(for host: String) -> Int {
        state.withLock { state in
            guard let queue = state.hosts[host] else { return 0 }
            return queue.order.count - queue.head
        }
    }

    /// What a queued request runs when it is given a slot.
    typealias Start = @Sendable () -> Void

    private struct State {
        var hosts: [String: Queue] = [:]
        var nextID: UInt64 = 0
    }

    /// One host's slots and waiters. Waiters are found by id (a cancelled one leaves in O(1)); `order` keeps arrival
    /// order. The id of a waiter that left stays in `order` until it is skipped or compacted away: `order` is emptied
    /// when the last waiter leaves and compacted once such ids outnumber the waiters, so it stays proportional to
    /// the waiters however many callers time out or cancel while every slot is held.
    private struct Queue {
        /// Below this many departed ids, `order` is not compacted (compacting a short array saves nothing).
        static let departedSlack = 32

        var admitted = 0
        var waiters: [UInt64: Start] = [:]
        var order: [UInt64] = []
        var head = 0

        var isIdle: Bool { admitted == 0 && waiters.isEmpty }

        mutating func admit(_ id: UInt64, _ start: @escaping Start, limit: Int) -> Bool {
            if admitted < limit, waiters.isEmpty {
                admitted += 1
                return true
            }
            waiters[id] = start
            order.append(id)
            return false
        }

        mutating func remove(_ id: UInt64) -> Start? {
            guard let start = waiters.removeValue(forKey: id) else { return nil }
            dropDeparted()
            return start
        }

        /// Forgets the ids of waiters that left: all of them when none waits any more, else once they outnumber the
        /// waiters (amortized O(1) a departure).
        private mutating func dropDeparted() {
            guard !waiters.isEmpty else {
                order.removeAll(keepingCapacity: true)
                head = 0
                return
            }
            let departed = order.count - head - waiters.count
            guard departed > max(waiters.count, Self.departedSlack) else { return }
            order = order[head...].filter { waiters[$0] != nil }
            head = 0
        }

        /// The next waiter, who takes over the slot; or nil, and the slot is free.
        mutating func release() -> Start? {
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
