import Synchronization

/// The state behind an ``EventLog``: its subscribers, each with a bounded buffer and the readers waiting on it.
///
/// `AsyncStream`'s own buffer is not used: its `yield` runs unspecialized generic code in the runtime (about 1.4 µs
/// per call on Linux, measured), which every subscriber would add to every step of every call. Here an event costs
/// an append to a ring buffer, or the resumption of a reader that was already waiting, inside one critical section.
final class EventFanOut: Sendable {
    private typealias Reader = CheckedContinuation<ClientEvent?, Never>

    private struct Subscriber {
        let id: UInt64
        var buffer: EventBuffer
        /// The readers waiting for the next event, longest waiting first; never non-empty while `buffer` is not.
        /// Usually one, but a stream iterated by several tasks at once has one per task: each event goes to one of
        /// them, and none is ever dropped or overwritten.
        var readers: [Reader] = []
    }

    private struct State {
        var subscribers: [Subscriber] = []
        var lastID: UInt64 = 0
        var dropped = 0
        var isFinished = false
    }

    private let state = Locked(State())
    /// `state.subscribers.count`, written under the lock whenever it changes: whether anyone listens is asked by every
    /// step of every call, and nobody listening, the common case, then costs one atomic read instead of the lock.
    private let listeners = Atomic(0)

    var hasSubscribers: Bool { listeners.load(ordering: .acquiring) > 0 }
    var subscriberCount: Int { state.withLock { $0.subscribers.count } }
    var droppedCount: Int { state.withLock { $0.dropped } }
    /// Readers suspended in ``next(for:)``, over every subscriber (for tests).
    var waitingReaderCount: Int { state.withLock { $0.subscribers.reduce(0) { $0 + $1.readers.count } } }

    /// Adds a subscriber keeping up to `limit` unread events; `nil` once the log is gone.
    func subscribe(limit: Int) -> UInt64? {
        state.withLock { state in
            guard !state.isFinished else { return nil }
            state.lastID += 1
            state.subscribers.append(Subscriber(id: state.lastID, buffer: EventBuffer(capacity: limit)))
            listeners.store(state.subscribers.count, ordering: .releasing)
            return state.lastID
        }
    }

    /// Hands `make()` to every subscriber: to its longest-waiting reader, or into its buffer (dropping the oldest when
    /// full).
    ///
    /// Readers are resumed inside the critical section: `resume` only schedules the reader's task, which runs later
    /// on its own executor, so nothing re-enters the lock, and every subscriber sees one order of events.
    func deliver(_ make: () -> ClientEvent) {
        state.withLock { state in
            guard !state.subscribers.isEmpty else { return }
            let event = make()
            for index in state.subscribers.indices {
                if !state.subscribers[index].readers.isEmpty {
                    state.subscribers[index].readers.removeFirst().resume(returning: event)
                } else if state.subscribers[index].buffer.append(event) {
                    state.dropped += 1
                }
            }
        }
    }

    /// The next event for subscriber `id`, waiting for one if none is buffered; `nil` once it was removed, or the
    /// log is gone and its buffer is empty.
    func next(for id: UInt64) async -> ClientEvent? {
        await withCheckedContinuation { (reader: Reader) in
            let answer = state.withLock { state -> ClientEvent?? in
                guard let index = state.subscribers.firstIndex(where: { $0.id == id }) else { return .some(nil) }
                if let event = state.subscribers[index].buffer.popFirst() { return event }
                if state.isFinished {
                    state.subscribers.remove(at: index)
                    listeners.store(state.subscribers.count, ordering: .releasing)
                    return .some(nil)
                }
                state.subscribers[index].readers.append(reader)
                return nil
            }
            if let answer { reader.resume(returning: answer) }
        }
    }

    /// Removes subscriber `id` (its task was cancelled, or its stream released); waiting readers get `nil`.
    func unsubscribe(_ id: UInt64) {
        let removed = state.withLock { state -> Subscriber? in
            guard let index = state.subscribers.firstIndex(where: { $0.id == id }) else { return nil }
            defer { listeners.store(state.subscribers.count, ordering: .releasing) }
            return state.subscribers.remove(at: index)
        }
        for reader in removed?.readers ?? [] { reader.resume(returning: nil) }
    }

    /// Ends every subscription: waiting readers get `nil`, the others read what is buffered, then `nil`.
    func finish() {
        let readers = state.withLock { state -> [Reader] in
            state.isFinished = true
            let readers = state.subscribers.flatMap(\.readers)
            state.subscribers.removeAll { !$0.readers.isEmpty }
            listeners.store(state.subscribers.count, ordering: .releasing)
            return readers
        }
        for reader in readers { reader.resume(returning: nil) }
    }
}

/// The subscriber's end of a stream: removes the subscription when the stream is released.
final class EventSubscription: Sendable {
    let fanOut: EventFanOut
    let id: UInt64

    init(fanOut: EventFanOut, id: UInt64) {
        self.fanOut = fanOut
        self.id = id
    }

    deinit {
        fanOut.unsubscribe(id)
    }
}

/// A first-in first-out buffer of at most `capacity` events that drops its oldest to make room; grows on demand.
struct EventBuffer {
    let capacity: Int
    private var slots: [ClientEvent?] = []
    private var head = 0
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Appends `event`; returns whether the oldest event was dropped to make room.
    mutating func append(_ event: ClientEvent) -> Bool {
        if count == capacity {
            slots[head] = event
            head = (head + 1) % capacity
            return true
        }
        if count == slots.count {
            // Full at the current size: unwrap so that the new slot goes at the end.
            if head != 0 {
                slots = Array(slots[head...] + slots[..<head])
                head = 0
            }
            slots.append(event)
        } else {
            slots[(head + count) % slots.count] = event
        }
        count += 1
        return false
    }

    /// Removes and returns the oldest event.
    mutating func popFirst() -> ClientEvent? {
        guard count > 0 else { return nil }
        defer {
            slots[head] = nil
            head = (head + 1) % slots.count
            count -= 1
        }
        return slots[head]
    }
}
