import Foundation

/// A value behind a lock: the one small `@unchecked Sendable` box the test doubles need.
///
/// The doubles are touched synchronously from cancellation handlers and from transports' closures, which cannot
/// await an actor; the critical sections are a few assignments and never await.
final class LockedState<State: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var state: State

    init(_ state: State) { self.state = state }

    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
