extension APIClient {
    // MARK: Joining a Flight in the Air

    /// A call that found the flight of its request in the air: what it needs to join it, and nothing it would need to
    /// lead one. A joiner's work is the flight's; it has no ``Call`` (an allocation, and a reference its task would hold
    /// and release), and its task holds none of the frames of a call on its way to the network
    /// (`Docs/Performance.md#joining`).
    struct Joining: Sendable {
        /// The flight's key, as the call's request was built with it (``BuiltRequest/sharingKey``).
        let key: RequestKey
        /// Where the look found the flight: joining it does not hash the key again.
        let sighting: RequestCoalescer<RequestKey, Exchange>.Sighting
        /// The request the call would send, for the flight's `Vary` (``Exchange/serves(_:)``).
        let request: TransportRequest

        init(key: RequestKey, sighting: RequestCoalescer<RequestKey, Exchange>.Sighting, request: TransportRequest) {
            self.key = key
            self.sighting = sighting
            self.request = request
        }

        /// The joining of a request as step 1 built it, which it takes over: its key and request move here, where
        /// copies of them cost a retain each, and their release when the built request was dropped.
        init(built: consuming BuiltRequest, at sighting: RequestCoalescer<RequestKey, Exchange>.Sighting) {
            self.init(key: built.sharingKey.unsafelyUnwrapped, sighting: sighting, request: built.request)
        }
    }

    /// The flight a call that must send may join without a ``Call``: its request's flight is in the air, the call
    /// would share it (a plain request built before, without a credential of its own, a stored response to stand in,
    /// or a body streamed), and nobody listens to events. Anything else goes the whole way (``send(_:for:)``), where
    /// the same guarantees hold at their full cost.
    ///
    /// A call whose events someone reads goes the whole way: its steps are reported there (``joined(_:id:)``).
    @inline(never)  // its temporaries stay on the thread's stack, off the async frame of the caller's `send`
    func joining(_ request: RequestFields, _ adapted: Adapted, _ outgoing: Outgoing) -> Joining? {
        // The key built with the request serves while the request is sent as built: not for a conditional request.
        // Cheapest first: a call that leads (no flight in the air, most calls) pays one lock and one comparison.
        guard let key = adapted.sharingKey, let sighting = coalescer.sighting(of: key), !adapted.isPrivate,
            outgoing.fallback == nil, request.streamed == nil, outgoing.request.sharesStorage(with: adapted.request),
            !instrumentation.isListening,
            // Then the key built with the request is the call's (`coalescingKey` would return it): asked here, so that
            // the key is not copied into that function and out again.
            mayShare(outgoing.request, policy: request.coalescing)
        else { return nil }
        return Joining(key: key, sighting: sighting, request: outgoing.request)
    }

    /// The flight a call may join before step 3 plans it: its request's flight is in the air, and the plan would send
    /// the request as built, with nothing stored to stand in. Without a cache that is every call that may use the
    /// network. With one, the flight's leader found nothing at all stored for the request (``NothingStored``), nothing
    /// has been stored since, and the call's own lookup would be a plain miss (a `GET` without conditional fields,
    /// `Cache-Control`, or a policy that reads the cache differently): the lookup is skipped and its miss counted as if
    /// it had run. The call then joins on the conditions of ``joining(_:_:_:)``.
    ///
    /// `flightSeen` is set to `false` when no flight for the request is in the air: the call leads, and its route need
    /// not look again after step 3 (a flight that starts meanwhile is joined when the call registers).
    ///
    /// `built` is the request as step 1 built it: no adapter or authenticator ran, so nothing made the call private. The
    /// answer is where the flight is: the caller then moves `built` into its ``Joining`` (``Joining/init(built:at:)``).
    @inline(never)  // its temporaries stay on the thread's stack, off the async frame of the caller's `send`
    func flightToJoinWithoutALookup(_ request: RequestFields, _ built: BuiltRequest, flightSeen: inout Bool)
        -> RequestCoalescer<RequestKey, Exchange>.Sighting?
    {
        // The key is read in place, not bound: a binding copies it (a retain and a release).
        guard built.sharingKey != nil else { return nil }
        guard let (sighting, note) = coalescer.notedSighting(of: built.sharingKey.unsafelyUnwrapped) else {
            flightSeen = false
            return nil
        }
        guard request.streamed == nil, request.cachePolicy != .onlyIfCached, !instrumentation.isListening,
            mayShare(built.request, policy: request.coalescing)
        else { return nil }
        if let cache = configuration.cache {
            guard request.cachePolicy != .reloadIgnoringCache, CacheLookup.missesPlainly(built.request),
                cache.countMiss(ifStill: NothingStored(note: note))
            else { return nil }
            // The lookup's own count, as ``recordLookup(_:now:id:)`` makes it (nobody listens for its event).
            instrumentation.count(.cacheMiss)
        }
        return sighting
    }

    /// Step 5 for a call that joins a flight in the air (``joining(_:_:_:)``), then step 6: the flight's exchange as
    /// this caller got it, status checked. The caller keeps its own cancellation and its own deadline, counted from
    /// `start`, when the call started, on the flight's one timer.
    ///
    /// The flight may land between the look and the join, or answer a request that differs from this one in a field
    /// its response varies on: the call then goes the whole way from step 1, as a call that found no flight does (it
    /// asks the cache again, which the flight may just have filled).
    // A small frame of its own, which the joiner's task holds while it waits (Docs/Performance.md#joining).
    @inline(never)
    nonisolated(nonsending) func join(
        _ joining: Joining, _ request: RequestFields, id: CallID, since start: Duration,
        decodingOnce shared: SharedDecoding?
    ) async throws -> Exchange {
        let deadline = deadline(of: request, since: start)
        if let coalesced = try await coalescer.join(
            joining.key, at: joining.sighting, tag: id.rawValue, deadline: deadline),
            coalesced.value.serves(joining.request)
        {
            return try checked(joined(coalesced, id: id), for: request)
        }
        return try await performFromTheStart(request, id: id, decodingOnce: shared)
    }

    /// ``perform(_:id:decodingOnce:)``, in a frame of its own: inlined, its frame would be the joiner's.
    @inline(never)
    private nonisolated(nonsending) func performFromTheStart(
        _ request: RequestFields, id: CallID, decodingOnce shared: SharedDecoding?
    ) async throws -> Exchange {
        try await perform(request, id: id, decodingOnce: shared)
    }

    /// The joiner's deadline on the client's scheduler: its next wait (``CallLimits/nextWait(now:)``) from `start`. The
    /// scheduler and the error it leaves with are the coalescer's (``JoinTimeouts``).
    private func deadline(of request: RequestFields, since start: Duration) -> JoinDeadline {
        let limit = limits(of: request, now: start).nextWait(now: start)
        return JoinDeadline(start: start, limit: limit)
    }
}
