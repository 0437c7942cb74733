/// Stops one attempt of ``URLSessionTransport`` from outside, when its ``TransportDeadline`` passes.
///
/// An attempt goes through steps (waiting for a connection slot, then the URLSession task), and each step
/// registers how to stop it. Firing runs the current step's handler; a step that registers after the stop fired
/// is told at once, so there is no moment in which a deadline can be missed.
final class AttemptStop: Sendable {
    private struct State {
        var reason: (any Error)?
        var handler: (@Sendable (any Error) -> Void)?
    }

    private let state = Locked(State())

    /// Stops the attempt with `error` (once): runs the current step's handler, or stops the next step at once.
    func fire(_ error: any Error) {
        let handler = state.withLock { state -> (@Sendable (any Error) -> Void)? in
            guard state.reason == nil else { return nil }
            state.reason = error
            defer { state.handler = nil }
            return state.handler
        }
        handler?(error)
    }

    /// Registers how the current step stops.
    ///
    /// - Returns: The reason, when the attempt was already stopped: the step must stop itself now.
    func watch(_ handler: @escaping @Sendable (any Error) -> Void) -> (any Error)? {
        state.withLock { state in
            if let reason = state.reason { return reason }
            state.handler = handler
            return nil
        }
    }

    /// The current step ended: its handler is no longer needed.
    func unwatch() {
        state.withLock { $0.handler = nil }
    }
}
