import Courier
import Foundation
import Synchronization

/// Answers every request at once with the same stored response: no I/O, no task, no copy of the body, so what a
/// loop of calls costs beyond calling this transport directly is Courier's own work.
///
/// It keeps its deadlines the way a real transport that enforces them does (``URLSessionTransport``): it registers
/// the deadline's expiry for the length of the exchange and cancels it at the end, so that work is counted too.
struct InMemoryTransport: HTTPTransport {
    let response: TransportResponse

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        response
    }

    func send(_ request: TransportRequest, deadline: TransportDeadline) async throws -> TransportResponse {
        let registration = deadline.onExpiry {}
        defer { registration.cancel() }
        return response
    }
}

/// Holds each request until the harness lets one through: the callers of a joiners round must all have joined the
/// flight before it ends, whatever order the scheduler runs them in.
final class GatedTransport: HTTPTransport {
    private struct State {
        /// Requests the harness let through before they arrived.
        var permits = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    let response: TransportResponse
    private let state = Mutex(State())
    private let calls = Atomic(0)

    init(response: TransportResponse) {
        self.response = response
    }

    /// Requests that reached the transport so far.
    var callCount: Int { calls.load(ordering: .relaxed) }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        calls.add(1, ordering: .relaxed)
        await withCheckedContinuation { continuation in
            let passes = state.withLock { state in
                guard state.permits == 0 else {
                    state.permits -= 1
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if passes { continuation.resume() }
        }
        return response
    }

    /// Lets the oldest held request through, or the next one to arrive.
    func release() {
        let continuation = state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.permits += 1
                return nil as CheckedContinuation<Void, Never>?
            }
            return state.waiting.removeFirst()
        }
        continuation?.resume()
    }
}
