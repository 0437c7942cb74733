import Foundation

/// One call on its way to the network: what the steps after the cache lookup need, passed along as one reference.
///
/// A class: the call is handed to the flight's closure and from frame to frame of the retry loop, and one reference
/// keeps those async frames small (`Docs/Performance.md#async-frames`).
///
/// It is made after the cache's plan, only for a call that sends (a fresh hit needs none), and it holds what it sends
/// and its client: the flight's closure then captures this one reference, which Swift uses as the closure's context
/// as it is, instead of allocating a context to hold several captures.
final class Call: Sendable {
    let client: APIClient
    let id: CallID
    /// The request as built and as the adapters returned it.
    let adapted: Adapted
    let limits: CallLimits
    /// How the call is authorized, or `nil` when it is sent without the client's credential.
    let authorization: APIClient.Authorization?
    let coalescing: CoalescingPolicy
    /// The type the leader decodes once for every caller of its flight, when it can be shared.
    let decoding: SharedDecoding?
    /// What the flight sends first and what its answer changes in the cache.
    let outgoing: Outgoing
    /// What sets a streamed shape apart (its response's body handed over as it arrives, an upload's body); `nil` for a
    /// buffered `send`.
    let streamed: StreamedShape?
    /// The request's own hedging, in place of the client's; `nil` follows the client's.
    let hedging: HedgingPolicy?
    /// Whose events the steps of this call's flight are: its own, until it leaves a flight that others still wait
    /// for (see ``attributeEvents(to:generation:)``). Held while a flight's event is emitted, so that an event is
    /// either emitted before the change or carries the new owner: never after the last event of the call that left.
    private let eventOwner: InlineLock<(id: CallID?, generation: UInt64)>

    init(
        client: APIClient, id: CallID, adapted: Adapted, limits: CallLimits,
        authorization: APIClient.Authorization?, coalescing: CoalescingPolicy, decoding: SharedDecoding?,
        outgoing: Outgoing, streamed: StreamedShape? = nil,
        hedging: HedgingPolicy? = nil
    ) {
        self.client = client
        self.id = id
        self.adapted = adapted
        self.limits = limits
        self.authorization = authorization
        self.coalescing = coalescing
        self.decoding = decoding
        self.outgoing = outgoing
        self.streamed = streamed
        self.hedging = hedging
        self.eventOwner = InlineLock((id, 0))
    }

    /// The credential identity the call's cache entries and flight are partitioned by.
    var partition: String? { authorization?.identity }
}

/// A call is the work of the flight it leads: the coalescer runs it in the flight's task.
extension Call: FlightOperation, EventAttributing {
    nonisolated(nonsending) func run() async throws -> Exchange {
        try await client.runFlight(self)
    }

    /// The call itself: its flight's events move to another caller when it leaves.
    var eventAttribution: (any EventAttributing)? { self }

    /// What is left of the call, and its next wait (``APIClient/waitBound(for:)``).
    func waitBound() -> WaitBound? { client.waitBound(for: self) }

    /// Its cache lookup's proof that nothing was stored for its request, for those who would join its flight.
    var flightNote: UInt64 { outgoing.nothingStored.note }

    /// The flight answered callers besides this one: its time is read once here, not once by each of them.
    func answeredOthers(_ exchange: Exchange) {
        exchange.markAnswered(at: client.instrumentation.elapsedTime)
    }

    /// The caller the flight's events belonged to left: they go to the caller with id `owner` from now on, or
    /// nowhere when no caller is left (a call's events end with its last event).
    func attributeEvents(to owner: UInt64?, generation: UInt64) {
        eventOwner.withLock { current in
            guard generation > current.generation else { return }
            current = (owner.map(CallID.init(rawValue:)), generation)
        }
    }
}

// MARK: Events of the Flight

extension Call {
    /// Emits a step of the flight this call leads (an attempt, a response, a retry, a store) for the caller its events
    /// belong to now: the leader, or a caller still waiting once the leader has left.
    func emit(_ kind: @autoclosure () -> ClientEvent.Kind) {
        client.instrumentation.emit(for: self, kind())
    }

    /// The slow path of ``emit(_:)``, when someone listens: the event goes to the current owner, under the lock.
    @inline(never)
    func emitAsOwner(in instrumentation: Instrumentation, _ kind: ClientEvent.Kind) {
        eventOwner.withLock { owner in
            if let id = owner.id { instrumentation.emit(id, kind) }
        }
    }

    /// The call the flight's attempts are sent for now, as observers' `prepareAttempt` is told.
    var eventID: CallID {
        eventOwner.withLock { $0.id } ?? id
    }
}

/// Decodes a flight's body once, in the flight, for every caller that asks for the same type with the same decoder:
/// with Foundation's `JSONDecoder` on Linux a 200-byte object costs about 80,000 instructions, so 10,000 joiners
/// decoding the same bytes would spend most of their time doing it again.
@usableFromInline
struct SharedDecoding: Sendable {
    /// The type, kept as a metatype rather than in a closure: a closure over a generic type allocates its context
    /// on every call, including the calls that join and never decode.
    @usableFromInline let type: any (Decodable & Sendable).Type
    @usableFromInline let decoder: JSONDecoder

    @inlinable
    init<T: Decodable & Sendable>(_ type: T.Type, decoder: JSONDecoder) {
        self.type = type
        self.decoder = decoder
    }

    /// The decoded body (or the decoding error), tagged with what it was decoded as.
    func decode(_ response: TransportResponse) -> DecodedValue {
        DecodedValue(type: ObjectIdentifier(type), decoder: decoder, result: type.sharedDecoding(response, decoder))
    }
}

extension Decodable where Self: Sendable {
    /// This type decoded from `response`, for ``SharedDecoding`` (called on its metatype, which opens it).
    fileprivate static func sharedDecoding(_ response: TransportResponse, _ decoder: JSONDecoder)
        -> Result<any AnyObject & Sendable, APIError>
    {
        do throws(APIError) {
            return .success(DecodedBox(try APIClient.decode(Self.self, from: response, decoder: decoder)))
        } catch {
            return .failure(error)
        }
    }
}

/// A body decoded once, shared by the callers of its flight and kept beside a fresh cache entry for later hits.
///
/// A class, so that the exchange and the cache entry that carry it copy one reference. It holds its decoder: the
/// match is by identity, and a decoder that could be freed while the value is stored could be followed by another
/// one, configured differently, at the same address.
@usableFromInline
final class DecodedValue: Sendable {
    @usableFromInline let type: ObjectIdentifier
    @usableFromInline let decoder: JSONDecoder
    /// A ``DecodedBox`` of the type `type` names, or the decoding error.
    @usableFromInline let result: Result<any AnyObject & Sendable, APIError>

    init(type: ObjectIdentifier, decoder: JSONDecoder, result: Result<any AnyObject & Sendable, APIError>) {
        self.type = type
        self.decoder = decoder
        self.result = result
    }

    /// Whether decoding succeeded: only a value is kept in the cache, never a failure.
    var isValue: Bool {
        if case .success = result { true } else { false }
    }

    /// The shared value when it was decoded as `T` by `decoder`; `nil` when the caller must decode its own.
    /// - Throws: The shared decoding error.
    @inlinable
    func value<T: Sendable>(as _: T.Type, decoder: JSONDecoder) throws(APIError) -> T? {
        guard type == ObjectIdentifier(T.self), self.decoder === decoder else { return nil }
        // The box holds a `T`: `type` said so. A class cast after that check, where `as? T` on an existential cost
        // every caller about 160 instructions.
        return unsafeDowncast(try result.get(), to: DecodedBox<T>.self).value
    }
}

/// A decoded value in a box of its own type (see ``DecodedValue/value(as:decoder:)``).
@usableFromInline
final class DecodedBox<Value: Sendable>: Sendable {
    @usableFromInline let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
