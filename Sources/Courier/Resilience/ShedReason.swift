/// Why a ``ConcurrencyLimit`` turned a call away; see ``APIError/shed(origin:reason:)``.
public enum ShedReason: Error, Sendable, Hashable, CustomStringConvertible {
    /// Every place was taken and the queue held its capacity of waiting callers.
    case queueFull(capacity: Int)
    /// The caller waited in the queue for as long as its deadline allowed, this long, and no place freed.
    case waitedPastDeadline(Duration)

    /// The reason as a phrase.
    public var description: String {
        switch self {
        case .queueFull(let capacity): "the queue of \(capacity) waiting calls was full"
        case .waitedPastDeadline(let wait): "no place freed within the call's deadline (\(wait))"
        }
    }
}
