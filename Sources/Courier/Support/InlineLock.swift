import Synchronization

/// A value guarded by a lock that lives inline in its owner: no allocation of its own in release builds.
///
/// For state owned by one object that is made per request (a request's parsed URL, a call's event owner), where a
/// ``Locked`` box would be a second allocation and a generic deinit. It is the standard library's `Mutex` in release
/// builds and on Apple platforms; in debug builds on Linux it is a ``Locked`` box, for the reason ``Locked`` gives:
/// ThreadSanitizer runs on debug builds and cannot see `Mutex` hand itself over when contended (a futex in the
/// uninstrumented standard library), so every contended critical section read as a data race. It did: two tasks reading
/// the URL of one request at once failed CI under ThreadSanitizer, though the lock held.
struct InlineLock<State: Sendable>: ~Copyable, Sendable {
    #if canImport(Glibc) && DEBUG
        private let box: Locked<State>

        init(_ state: State) {
            box = Locked(state)
        }

        @inline(__always)
        borrowing func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
            try box.withLock(body)
        }
    #else
        private let mutex: Mutex<State>

        init(_ state: State) {
            mutex = Mutex(state)
        }

        @inline(__always)
        borrowing func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
            try mutex.withLock { state in try body(&state) }
        }
    #endif
}
