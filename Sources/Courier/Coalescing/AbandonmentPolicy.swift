/// What happens to a flight of ``RequestCoalescer`` when every caller waiting on it has cancelled.
///
/// ```swift
/// // Warm a cache even if the UI that asked for the image goes away:
/// let images = RequestCoalescer<URL, Data>(whenAbandoned: .finish)
/// ```
///
/// - Important: The policy is applied at the moment the *last* waiter leaves, on the coalescer's actor. A flight is
///   never cancelled while at least one caller still waits on it, whatever the policy.
public enum AbandonmentPolicy: Sendable {
    /// Cancel the flight's task and forget the flight immediately (the default).
    ///
    /// The next caller for the same key starts a fresh flight instead of joining one that is being torn down. A late
    /// result of the cancelled flight (if its operation ignores cancellation) is discarded.
    case cancel

    /// Let the flight run to completion, for example to fill a cache.
    ///
    /// The flight stays in the table while it runs, so callers arriving in the meantime join it; its result is
    /// delivered to them, or dropped if nobody is waiting when it ends.
    case finish
}
