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
        state.withLock { $0.hosts[host, default: Queue()].admit(id, start, limit: limit) } == .startNow
    }

    /// Takes a queued request out because its caller left. Does nothing when it was already admitted (its start
    /// then finds the caller gone and gives the slot back) or was never queued.
    ///
    /// - Returns: `true` when it was queued: its start will never run.
    @discardableResult
    func withdraw(_ host: String, id: UInt64) -> Bool {
        state.withLock { state in
            let action = state.hosts[host]?.withdraw(id)
            if state.hosts[host]?.isIdle == true { state.hosts[host] = nil }
            return action == .withdrawn
        }
    }

    /// Gives the slot back: to the longest-waiting request for `host`, if there is one.
    func leave(_ host: String) {
        let action = state.withLock { state -> Queue.ReleaseAction? in
            let action = state.hosts[host]?.release()
            if state.hosts[host]?.isIdle == true { state.hosts[host] = nil }
            return action
        }
        if case .start(let next)? = action { next() }
    }

    /// Requests inside URLSession and requests queued here, for `host` (for tests).
    func counts(for host: String) -> (admitted: Int, queued: Int) {
        state.withLock { state in
            let queue = state.hosts[host]
            return (queue?.admitted ?? 0, queue?.queued ?? 0)
        }
    }

    /// How many entries `host`'s arrival order holds, withdrawn ones included (for tests: it must stay
    /// proportional to the requests queued, whoever left).
    func arrivalOrderCount(for host: String) -> Int {
        state.withLock { state in
            state.hosts[host]?.arrivalOrderCount ?? 0
        }
    }

    /// What a queued request runs when it is given a slot.
    typealias Start = @Sendable () -> Void

    private struct State {
        var hosts: [String: Queue] = [:]
        var nextID: UInt64 = 0
    }

    /// One host's slots and waiters.
    private typealias Queue = ConnectionGateStateMachine<Start>
}
