#if AsyncHTTPClient
    import NIOCore
    import Synchronization

    /// Which SwiftNIO event loop runs a buffered exchange of ``AsyncHTTPClientTransport``: its home loop while it is
    /// the transport's only exchange in flight, the group's next loop otherwise.
    ///
    /// AsyncHTTPClient's task API runs a request's delegate on the request's own event loop, which it takes in turn
    /// from the group (`.indifferent`), while the pool hands out whichever idle connection there is. One caller
    /// sending one request after another therefore had every other request on a loop that was not its connection's:
    /// each of the connection's events crossed to the other loop and woke it, and the caller's task was woken from
    /// there. Measured over nginx, one call at a time (`Docs/Benchmarks.md`, session 15): 3.3–3.6 event-loop
    /// wake-ups and about 18 system calls per request, against 0.3–0.9 and about 9 on one loop. On its
    /// home loop the exchange starts on the loop its connection was made on (a request's loop is where the pool
    /// opens its connection, and where it looks first for an idle one), so the connection's events, the delegate and
    /// the caller's wake-up all happen on one thread.
    ///
    /// Under concurrent load the loops are still all used: an exchange that starts while another is in flight takes
    /// the group's next loop, as AsyncHTTPClient would (`EventLoopGroup.next()`), and is started there too, so that
    /// AsyncHTTPClient's bookkeeping for it runs on its own loop rather than being sent there from the caller's thread.
    /// Each transport takes its home from the group in turn, so that many transports do not all gather on one loop.
    final class EventLoopAffinity: Sendable {
        /// The loop an exchange runs on when it is the only one in flight.
        let home: any EventLoop
        /// Where the loops of overlapping exchanges come from.
        private let group: any EventLoopGroup
        private let inFlight = Atomic<Int>(0)

        init(_ group: any EventLoopGroup) {
            self.group = group
            home = group.next()
        }

        /// Counts an exchange in; returns the home loop when no other exchange was in flight, the group's next loop
        /// otherwise. Every call is followed by one ``leave()``.
        func enter() -> any EventLoop {
            inFlight.add(1, ordering: .relaxed).oldValue == 0 ? home : group.next()
        }

        /// Counts an exchange out.
        func leave() {
            inFlight.subtract(1, ordering: .relaxed)
        }

        /// Exchanges in flight (for tests).
        var count: Int { inFlight.load(ordering: .relaxed) }
    }
#endif
