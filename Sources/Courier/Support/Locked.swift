import Foundation

#if canImport(Glibc)
    import Synchronization
#endif

/// A value guarded by a lock: the one place Courier vouches for `Sendable` by hand.
///
/// Used where state must be touched synchronously from a cancellation handler, which cannot await an
/// actor, and on the per-request path, where an executor hop costs more than the work it protects. Keep
/// critical sections short and never await inside one.
///
/// On Linux the lock is the standard library's `Mutex`: an uncontended lock and unlock are one atomic exchange each
/// (glibc's mutex cost about 70 instructions a pair, and a cache hit takes eight), and a contended lock spins briefly
/// before it sleeps in the kernel. The critical sections here last nanoseconds: with a lock that sleeps at once, two
/// threads that collide put one of them to sleep, and with 10,000 concurrent callers of one key that sleeping
/// dominated the burst. (`Mutex` needs macOS 15 and iOS 18; elsewhere the lock is an `NSLock`.)
///
/// `State` must be `Sendable` (as in swift-async-algorithms' `ManagedCriticalState`): the lock makes access
/// exclusive, but it cannot make a non-`Sendable` value (a class shared elsewhere) safe to hand across tasks.
final class Locked<State: Sendable>: @unchecked Sendable {
    #if canImport(Glibc)
        private let mutex: Mutex<State>

        init(_ state: State) {
            mutex = Mutex(state)
        }

        func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
            try mutex.withLock { state in try body(&state) }
        }
    #else
        private let lock = NSLock()
        /// Kept behind a pointer rather than in a stored `var`: a class's `var` is checked for exclusive access at run
        /// time on every use, which the lock already guarantees, and the check cost about 80 instructions per use on
        /// a path that takes a dozen locks per call.
        private let state: UnsafeMutablePointer<State>

        init(_ state: State) {
            self.state = .allocate(capacity: 1)
            self.state.initialize(to: state)
        }

        deinit {
            state.deinitialize(count: 1)
            state.deallocate()
        }

        func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
            lock.lock()
            defer { lock.unlock() }
            return try body(&state.pointee)
        }
    #endif
}
