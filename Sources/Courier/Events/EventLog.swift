/// Fans events out to any number of `AsyncStream` subscribers, each with its own bounded buffer.
///
/// Every ``APIClient`` has one (``APIClient/eventLog``); it also works on its own, for code that wants to report
/// its steps the same way:
///
/// ```swift
/// let log = EventLog()
/// let events = log.subscribe()
/// log.emit(CallID(rawValue: 1), .cacheMiss)  // built only because `events` is listening
/// ```
///
/// - Important: Concurrency contract.
///   - ``emit(_:_:)`` never suspends and never waits for a subscriber. Each subscriber has a buffer of
///     ``bufferSize`` events (or its own size) that keeps the newest: when a subscriber falls behind, its oldest
///     unread events are dropped and counted in ``droppedCount``, and the call that emitted goes on at once.
///   - With no subscriber, ``emit(_:_:)`` reads one flag under a lock and returns: the event is not built and the
///     clock is not read.
///   - Every subscriber receives every event emitted while it is subscribed (drops aside), in the same order as
///     every other subscriber, and never earlier than a previous one (``ClientEvent/at`` does not go back).
///   - A subscriber whose task is cancelled, or which stops iterating and is released, is removed. When the log
///     is released, every stream ends once its buffered events are read.
///   - A stream iterated by several tasks at once hands each event to one of them; it never hangs either.
public final class EventLog: Sendable {
    /// The buffer size of a subscriber that does not choose one: 1,024 events.
    public static let defaultBufferSize = 1_024

    /// How many unread events a subscriber keeps by default before dropping its oldest.
    public let bufferSize: Int

    private let fanOut = EventFanOut()
    /// Time elapsed on the injected clock since the log was created. A client's deadlines are kept on the same
    /// one, so that the time an attempt was sent is also where its deadline counts from (one read of the clock).
    let stopwatch: Stopwatch

    /// Creates a log with no subscribers.
    ///
    /// - Parameters:
    ///   - bufferSize: How many unread events a subscriber keeps by default; at least 1. 1,024 by default.
    ///   - clock: The clock events are timed on; ``ClientEvent/at`` is measured from now. `ContinuousClock` by
    ///     default.
    public init(bufferSize: Int = EventLog.defaultBufferSize, clock: any Clock<Duration> = ContinuousClock()) {
        self.bufferSize = max(1, bufferSize)
        self.stopwatch = Stopwatch(clock: clock)
    }

    deinit {
        fanOut.finish()
    }

    // MARK: Subscribing

    /// Returns a new subscriber: a stream of every event emitted from now on.
    ///
    /// The subscription starts when this returns, not when iteration starts, so no event emitted in between is
    /// missed. Several subscribers each get every event.
    ///
    /// - Important: A stream is one subscriber. Iterating the same stream from several tasks at once is safe, but
    ///   they share it: each event goes to one of them (the one that has waited longest), and cancelling any of
    ///   them ends the stream for all. For every task to see every event, subscribe once per task.
    ///
    /// - Parameter limit: How many unread events this subscriber keeps before dropping its oldest; ``bufferSize``
    ///   when `nil`.
    /// - Returns: A stream that ends when its task is cancelled, or when the log is released and what it buffered
    ///   has been read.
    public func subscribe(bufferingNewest limit: Int? = nil) -> AsyncStream<ClientEvent> {
        guard let id = fanOut.subscribe(limit: max(1, limit ?? bufferSize)) else { return AsyncStream { nil } }
        let subscription = EventSubscription(fanOut: fanOut, id: id)
        return AsyncStream(
            unfolding: { await subscription.fanOut.next(for: subscription.id) },
            onCancel: { subscription.fanOut.unsubscribe(subscription.id) })
    }

    /// Whether anyone is listening; when not, emitting costs one atomic read.
    public var hasSubscribers: Bool { fanOut.hasSubscribers }

    /// How many subscribers are listening now.
    public var subscriberCount: Int { fanOut.subscriberCount }

    /// Tasks suspended waiting for their subscriber's next event (for tests).
    var waitingReaderCount: Int { fanOut.waitingReaderCount }

    /// How many events were dropped so far because a subscriber's buffer was full, summed over every subscriber
    /// the log ever had.
    public var droppedCount: Int { fanOut.droppedCount }

    /// Time elapsed on the log's clock since it was created: the ``ClientEvent/at`` of an event emitted now.
    public var elapsedTime: Duration { stopwatch.elapsed }

    // MARK: Emitting

    /// Sends an event to every subscriber, timed now; builds it only if there is one.
    ///
    /// - Parameters:
    ///   - callID: The call the step belongs to.
    ///   - kind: The step; not evaluated when nobody listens.
    @inlinable
    public func emit(_ callID: CallID, _ kind: @autoclosure () -> ClientEvent.Kind) {
        guard hasSubscribers else { return }
        deliver(callID, kind())
    }

    /// The slow path of ``emit(_:_:)``: times the event and hands it to every subscriber, in one critical section,
    /// so that every subscriber sees one order of events and their times never go back.
    @usableFromInline
    func deliver(_ callID: CallID, _ kind: ClientEvent.Kind) {
        fanOut.deliver { ClientEvent(callID: callID, at: stopwatch.elapsed, kind: kind) }
    }

}
