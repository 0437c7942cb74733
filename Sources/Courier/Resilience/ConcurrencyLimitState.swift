/// The state machine of a ``ConcurrencyLimit``: calls in flight, the current limit, and the waiters in arrival order.
/// Its methods return what to resume, so that continuations are resumed after the critical section.
struct ConcurrencyLimitState: Sendable {
    struct Waiter: Sendable {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    /// What an acquiring caller does.
    enum Acquisition {
        case granted
        case wait
        case shed(ShedReason)
    }

    let configuration: ConcurrencyLimit.Configuration
    private(set) var inFlight = 0
    /// The limit now; a `Double` so that AIMD's multiplicative decrease and additive increase stay smooth.
    private(set) var limit: Double
    private(set) var waiters: [Waiter] = []
    /// Why a caller left before it got in line: its cancellation or deadline came first.
    enum Departure: Sendable {
        case cancelled
        case expired(Duration)
    }

    /// What became of a caller on its way into the queue.
    enum Enqueued {
        case queued
        case granted
        case left(Departure)
    }

    /// Callers that were cancelled or expired before they got in line, by id.
    private var gone: [UInt64: Departure] = [:]

    init(_ configuration: ConcurrencyLimit.Configuration) {
        self.configuration = configuration
        switch configuration.limit {
        case .fixed(let limit): self.limit = Double(limit)
        case .aimd(let initial, _, _, _): self.limit = Double(initial)
        }
    }

    var currentLimit: Int { max(1, Int(limit)) }

    /// A caller arrives: a place if one is free and nobody waits before it, a place in the queue, or shed.
    mutating func acquire() -> Acquisition {
        if waiters.isEmpty, inFlight < currentLimit {
            inFlight += 1
            return .granted
        }
        guard waiters.count < configuration.queueCapacity else {
            return .shed(.queueFull(capacity: configuration.queueCapacity))
        }
        return .wait
    }

    /// Puts the caller in the queue, unless it left (cancelled, expired) before it got there or a place freed on the
    /// way.
    mutating func enqueue(_ waiter: Waiter) -> Enqueued {
        if let departure = gone.removeValue(forKey: waiter.id) { return .left(departure) }
        if waiters.isEmpty, inFlight < currentLimit {
            inFlight += 1
            return .granted
        }
        waiters.append(waiter)
        return .queued
    }

    /// A waiter leaves the queue (cancelled, or its deadline passed). `nil` when it is not in line: not yet there (it
    /// is then turned away when it arrives), or granted already, or gone.
    mutating func leave(_ id: UInt64, _ departure: Departure) -> Waiter? {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else {
            if !granted.contains(id) { gone[id] = departure }
            return nil
        }
        return waiters.remove(at: index)
    }

    /// Ids granted from the queue whose caller has not yet seen it, so that a late cancellation is not mistaken for a
    /// caller on its way in.
    private var granted: Set<UInt64> = []

    /// The caller is done with its id: granted and running, or gone.
    mutating func finish(_ id: UInt64) {
        granted.remove(id)
        gone[id] = nil
    }

    /// A call ends: its place goes to the waiters in arrival order, as far as the (maybe changed) limit allows.
    mutating func release(dropped: Bool) -> [Waiter] {
        adapt(dropped: dropped)
        inFlight -= 1
        var granted: [Waiter] = []
        while !waiters.isEmpty, inFlight < currentLimit {
            let waiter = waiters.removeFirst()
            self.granted.insert(waiter.id)
            granted.append(waiter)
            inFlight += 1
        }
        return granted
    }

    /// Netflix's AIMD: a drop (a timeout, a `503`, a `429`) cuts the limit by the backoff ratio; a success while at
    /// least half the limit is in use raises it by one.
    private mutating func adapt(dropped: Bool) {
        guard case .aimd(_, let minimum, let maximum, let backoff) = configuration.limit else { return }
        if dropped {
            limit = max(Double(minimum), limit * backoff)
        } else if Double(inFlight) * 2 >= limit {
            limit = min(Double(maximum), limit + 1)
        }
    }
}
