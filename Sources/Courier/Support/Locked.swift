import Foundation

#if canImport(Glibc) && !DEBUG
    import Synchronization
#elseif canImport(Glibc)
    import Glibc
#endif

/// A value guarded by a lock: the one place Courier vouches for `Sendable` by hand.
///
/// Used where state must be touched synchronously from a cancellation handler, which cannot await an
/// actor, and on the per-request path, where an executor hop costs more than the work it protects. Keep
/// critical sections short and never await inside one.
///
/// The critical sections here last nanoseconds, so a contended lock should spin briefly before it sleeps: with a
/// lock that sleeps at once, two threads that collide put one of them to sleep in the kernel, and with 10,000
/// concurrent callers of one key that sleeping dominated the burst. On Linux:
/// - Release builds use the standard library's `Mutex`, which spins before it sleeps. An uncontended lock and unlock
///   are one atomic exchange each; glibc's mutex cost about 70 instructions a pair, and a cache hit takes eight.
/// - Debug builds use glibc's adaptive mutex, which also spins first. ThreadSanitizer runs on debug builds and cannot
///   see `Mutex` hand itself over in its contended path (a priority-inheritance futex, in the uninstrumented standard
///   library), so it would report every contended critical section as a race. Glibc's mutex it intercepts. The
///   critical sections it checks are the same code in both builds.
/// - Elsewhere the lock is an `NSLock` (`Mutex` needs macOS 15 and iOS 18).
///
/// `State` must be `Sendable` (as in swift-async-algorithms' `ManagedCriticalState`): the lock makes access
/// exclusive, but it cannot make a non-`Sendable` value (a class shared elsewhere) safe to hand across tasks.
final class Locked<State: Sendable>: @unchecked Sendable {
    #if canImport(Glibc) && !DEBUG
        private let mutex: Mutex<State>

        init(_ state: State) {
            mutex = Mutex(state)
        }

        func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
            try mutex.withLock { state in try body(&state) }
        }
    #else
        #if canImport(Glibc)
            private let mutex: UnsafeMutablePointer<pthread_mutex_t>
        #else
            private let lock = NSLock()
        #endif
        /// Kept behind a pointer rather than in a stored `var`: a class's `var` is checked for exclusive access at run
        /// time on every use, which the lock already guarantees, and the check cost about 80 instructions per use on
        /// a path that takes a dozen locks per call.
        private let state: UnsafeMutablePointer<State>

        init(_ state: State) {
            self.state = .allocate(capacity: 1)
            self.state.initialize(to: state)
            #if canImport(Glibc)
                mutex = .allocate(capacity: 1)
                var attributes = pthread_mutexattr_t()
                pthread_mutexattr_init(&attributes)
                pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
                pthread_mutex_init(mutex, &attributes)
                pthread_mutexattr_destroy(&attributes)
            #endif
        }

        deinit {
            state.deinitialize(count: 1)
            state.deallocate()
            #if canImport(Glibc)
                pthread_mutex_destroy(mutex)
                mutex.deallocate()
            #endif
        }

        func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
            #if canImport(Glibc)
                pthread_mutex_lock(mutex)
                defer { pthread_mutex_unlock(mutex) }
            #else
                lock.lock()
                defer { lock.unlock() }
            #endif
            return try body(&state.pointee)
        }
    #endif
}
