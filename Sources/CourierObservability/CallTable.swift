#if Observability
    import Courier
    import Synchronization
    import Tracing

    /// A call as the observer knows it: its client's log and its id (ids are unique per client only).
    struct CallKey: Hashable, Sendable {
        let log: ObjectIdentifier
        let id: CallID

        init(_ log: EventLog, _ id: CallID) {
            self.init(log: ObjectIdentifier(log), id: id)
        }

        init(log: ObjectIdentifier, id: CallID) {
            self.log = log
            self.id = id
        }
    }

    /// What the observer remembers of a call between its first and last event.
    struct CallState: Sendable {
        /// The order in which the observer saw the call start; see ``CallTable``.
        let sequence: UInt64
        let method: RequestMethod
        /// Redacted, as the event gave it.
        let url: String
        /// Whether the cache answered, so that a `revalidationSent` that follows is a background refresh, not a miss.
        var servedFromCache = false
        /// Whether the call shared another call's flight.
        var joined = false
        /// The span of the whole call, when tracing.
        var span: (any Span)?
        /// The span of the attempt on the wire, between `prepareAttempt` and its response or failure.
        var attemptSpan: (any Span)?
        /// Whether the call sent an attempt: only such a call can be the leader a joiner links to.
        var led = false
    }

    /// Every call in progress, and the span contexts of leaders that ended while a call that may have joined them was
    /// still running.
    ///
    /// A joiner learns who led its flight only when the result arrives (`joinedFlight(leader:)`), and by then the leader
    /// may have finished. A joiner joins while the flight is in the air, so its start was recorded before the leader's
    /// end: a leader's context is kept until every call that had started by then has ended. Memory stays bounded by the
    /// number of calls in progress.
    final class CallTable: Sendable {
        private struct Ended {
            let context: ServiceContext
            /// The last sequence number handed out when the leader ended.
            let stamp: UInt64
        }

        private struct State {
            var open: [CallKey: CallState] = [:]
            var openSequences: Set<UInt64> = []
            var ended: [CallKey: Ended] = [:]
            /// The keys of `ended` from `endedHead` on, in the order they ended, so stamps never decrease.
            var endedOrder: [CallKey] = []
            var endedHead = 0
            var nextSequence: UInt64 = 0
            /// No open call has a smaller sequence number; moves only forward.
            var lowestOpen: UInt64 = 0
        }

        private let state = Mutex(State())

        /// Records a call that started.
        func begin(_ key: CallKey, method: RequestMethod, url: String, span: (any Span)?) {
            state.withLock { state in
                let sequence = state.nextSequence
                state.nextSequence += 1
                state.open[key] = CallState(sequence: sequence, method: method, url: url, span: span)
                state.openSequences.insert(sequence)
            }
        }

        /// The call's state, or `nil` once it ended (a background revalidation can outlive its call).
        subscript(key: CallKey) -> CallState? {
            state.withLock { $0.open[key] }
        }

        /// Changes the state of a call in progress and returns what `body` returns; `nil` when the call is not in progress.
        func update<Result>(_ key: CallKey, _ body: (inout CallState) -> Result) -> Result? {
            state.withLock { state in
                guard state.open[key] != nil else { return nil }
                return body(&state.open[key]!)
            }
        }

        /// The context of the span of `key`, in progress or a leader that ended recently.
        func spanContext(of key: CallKey) -> ServiceContext? {
            state.withLock { state in state.open[key]?.span?.context ?? state.ended[key]?.context }
        }

        /// Removes a call that ended and returns its state; keeps its span context for joiners when it led a flight.
        func end(_ key: CallKey) -> CallState? {
            state.withLock { state in
                guard let ended = state.open.removeValue(forKey: key) else { return nil }
                state.openSequences.remove(ended.sequence)
                if ended.led, let span = ended.span {
                    state.ended[key] = Ended(context: span.context, stamp: state.nextSequence - 1)
                    state.endedOrder.append(key)
                }
                Self.prune(&state)
                return ended
            }
        }

        /// How many calls are in progress and how many leader contexts are kept (for tests).
        var counts: (open: Int, ended: Int) {
            state.withLock { ($0.open.count, $0.ended.count) }
        }

        /// Forgets the leaders that no call in progress can have joined: amortized constant time, since both the lowest
        /// open sequence and the order of ended leaders only move forward.
        private static func prune(_ state: inout State) {
            guard !state.ended.isEmpty else { return }
            while state.lowestOpen < state.nextSequence, !state.openSequences.contains(state.lowestOpen) {
                state.lowestOpen += 1
            }
            while state.endedHead < state.endedOrder.count {
                let key = state.endedOrder[state.endedHead]
                guard let ended = state.ended[key], ended.stamp < state.lowestOpen else { break }
                state.ended[key] = nil
                state.endedHead += 1
            }
            if state.endedHead > 64, state.endedHead * 2 > state.endedOrder.count {
                state.endedOrder.removeFirst(state.endedHead)
                state.endedHead = 0
            }
        }
    }
#endif
