import Foundation

/// A value guarded by a lock: the one place Courier vouches for `Sendable` by hand.
///
/// Used where state must be touched synchronously from a cancellation handler, which cannot await an
/// actor. Keep critical sections short and never await inside one.
final class Locked<State>: @unchecked Sendable {
    private let lock = NSLock()
    private var state: State

    init(_ state: State) {
        self.state = state
    }

    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
