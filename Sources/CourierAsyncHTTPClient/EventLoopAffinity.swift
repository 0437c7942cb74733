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
    ///
    /// Except where the pool may open a connection: the pool opens one on the loop of the request that waits for it,
    /// in the order requests reach it. Started on their loops, the requests of a burst reached it one loop's queue at a
    /// time, and whichever loop ran first got every connection (all 8 on one loop, seen in about one round in three
    /// over nginx); when that was not the home loop, every later exchange alone crossed loops, 4 more context
    /// switches and about 100 µs more CPU per request (`Docs/Benchmarks.md`, session 20). An exchange that takes the
    /// transport past the most it has had in flight at once is the one a connection may be opened for: it is handed to
    /// AsyncHTTPClient from the caller's thread, as soon as its loop is chosen, so that a burst's connections follow
    /// the order the loops were given out in, the home loop first.
    final class EventLoopAffinity: Sendable {
        /// Where an exchange runs, and whether it is started there (see ``EventLoopAffinity``).
        struct Placement {
            /// The loop the exchange's delegate runs on, and the pool's first choice for its connection.
            let loop: any EventLoop
            /// Whether the exchange is handed to AsyncHTTPClient on `loop`; `false` for one that may make the pool
            /// open a connection, handed over from the caller's thread.
            let startsOnLoop: Bool
        }

        /// The loop an exchange runs on when it is the only one in flight.
        let home: any EventLoop
        /// Where the loops of overlapping exchanges come from.
        private let group: any EventLoopGroup
        private let inFlight = Atomic<Int>(0)
        /// The most exchanges ever in flight at once: an exchange that stays within it finds the pool grown for it
        /// already (or at its limit), so it may start on its loop.
        private let peak = Atomic<Int>(0)

        init(_ group: any EventLoopGroup) {
            self.group = group
            home = group.next()
        }

        /// Counts an exchange in; it runs on the home loop when no other exchange was in flight, on the group's next
        /// loop otherwise, and is handed over from the caller's thread when it is the most the transport has had in
        /// flight at once. Every call is followed by one ``leave()``.
        func enter() -> Placement {
            let inFlight = inFlight.add(1, ordering: .relaxed).newValue
            let loop = inFlight == 1 ? home : group.next()
            // Relaxed, and a race between two callers only hands one more exchange over from its caller's thread.
            guard inFlight > peak.load(ordering: .relaxed) else { return Placement(loop: loop, startsOnLoop: true) }
            _ = peak.max(inFlight, ordering: .relaxed)
            return Placement(loop: loop, startsOnLoop: false)
        }

        /// Counts an exchange out.
        func leave() {
            inFlight.subtract(1, ordering: .relaxed)
        }

        /// Exchanges in flight (for tests).
        var count: Int { inFlight.load(ordering: .relaxed) }
    }
#endif
