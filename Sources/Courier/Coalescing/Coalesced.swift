/// What a caller of ``RequestCoalescer/run(_:operation:)`` got: the shared value and whether it joined another
/// caller's flight.
///
/// Every caller of one flight receives the same `value` and the same `flightID`; exactly one of them (the caller
/// that started the flight) sees `joined == false`, unless that caller cancelled and left before the flight ended.
///
/// ```swift
/// let result = try await coalescer.run(url) { try await transport.fetch(url) }
/// if result.joined {
///     logger.debug("shared flight \(result.flightID) for \(url)")
/// }
/// ```
///
/// - Important: `Coalesced` is a plain `Sendable` value and may cross any isolation boundary. Every waiter of a
///   flight receives the same `value`: if `Value` is a class, they all share one instance.
public struct Coalesced<Value: Sendable>: Sendable {
    /// The value produced by the flight, identical for every caller of that flight.
    public let value: Value

    /// `true` if this caller found the flight already in progress and waited on it instead of starting one.
    public let joined: Bool

    /// The identifier of the flight that produced `value`.
    ///
    /// Identifiers are unique per ``RequestCoalescer`` instance and increase monotonically, so events emitted by
    /// joiners and by the leader can be correlated ("who led").
    public let flightID: UInt64

    /// Creates a result; normally only ``RequestCoalescer`` does this, but test doubles may need to as well.
    ///
    /// - Parameters:
    ///   - value: The shared value.
    ///   - joined: Whether the caller joined an existing flight.
    ///   - flightID: The identifier of the flight that produced `value`.
    public init(value: Value, joined: Bool, flightID: UInt64) {
        self.value = value
        self.joined = joined
        self.flightID = flightID
    }
}

extension Coalesced: Equatable where Value: Equatable {}
