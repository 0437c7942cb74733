import Foundation

/// Puts a request in a named slot where only the newest request counts, as search-as-you-type needs.
///
/// Set it on each request of a feature (``APIRequest/latestWins``): a new request in the same slot cancels every
/// request still in it, and their callers get ``APIError/superseded(slot:)``, a clear error to ignore rather than a
/// stale answer arriving after a fresh one. With a ``debounce``, a request first waits that long on the client's
/// clock and is sent only if no newer one arrived meanwhile, so a fast typist sends one request, not one per key.
///
/// ```swift
/// var search = APIRequest<[User]>.get("/users/search", query: [URLQueryItem(name: "q", value: text)])
/// search.latestWins = LatestWins(slot: "user-search", debounce: .milliseconds(250))
/// let users = try await client.send(search).value  // APIError.superseded when the user typed on
/// ```
///
/// A request identical to one in its slot (same method, URL, headers and body) does not supersede it: the two are the
/// same question, so the newer caller shares the older one's flight as coalescing always does, without a new
/// debounce. Slots belong to a client; a slot's name means nothing to another client.
public struct LatestWins: Sendable, Hashable {
    /// The slot's name: requests with the same name replace one another.
    public var slot: String
    /// How long a request waits, on ``APIClient/Configuration/clock``, before it is sent; `.zero` sends at once.
    public var debounce: Duration

    /// Creates a slot assignment.
    ///
    /// - Parameters:
    ///   - slot: The slot's name.
    ///   - debounce: How long to wait before sending, giving a newer request the chance to replace this one.
    public init(slot: String, debounce: Duration = .zero) {
        self.slot = slot
        self.debounce = debounce
    }
}

/// The requests in flight in each latest-wins slot, and how to stop them.
final class LatestWinsSlots: Sendable {
    private struct Entry {
        let fingerprint: TransportRequest?
        let supersede: AsyncStream<Void>.Continuation
        var isSuperseded = false
    }

    private struct State {
        var nextID = 0
        var slots: [String: [Int: Entry]] = [:]
    }

    private let state = Locked(State())

    /// Runs `operation` as the newest request of `slot`: supersedes the requests in the slot that are not identical
    /// to `fingerprint`, waits out `debounce` unless an identical request is already in the slot, and ends with
    /// ``APIError/superseded(slot:)`` if a newer request supersedes this one first.
    func run<Value: Sendable>(
        _ latestWins: LatestWins, fingerprint: TransportRequest?, clock: any Clock<Duration>,
        operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let (superseded, supersede) = AsyncStream<Void>.makeStream()
        let (id, joinsIdentical) = enter(latestWins.slot, fingerprint: fingerprint, supersede: supersede)
        defer { leave(latestWins.slot, id: id) }
        let debounce = joinsIdentical ? .zero : latestWins.debounce
        do {
            return try await withThrowingTaskGroup(of: Value?.self) { group in
                group.addTask {
                    if debounce > .zero { try await clock.sleep(for: debounce) }
                    return try await operation()
                }
                group.addTask {
                    for await _ in superseded { return nil }
                    return nil
                }
                defer { group.cancelAll() }
                guard let value = try await group.next() ?? nil else {
                    throw isSuperseded(latestWins.slot, id: id)
                        ? APIError.superseded(slot: latestWins.slot) : CancellationError()
                }
                return value
            }
        } catch  where isSuperseded(latestWins.slot, id: id) {
            throw APIError.superseded(slot: latestWins.slot)
        }
    }

    /// Adds a request to its slot and supersedes the others that are not identical to it.
    private func enter(
        _ slot: String, fingerprint: TransportRequest?, supersede: AsyncStream<Void>.Continuation
    ) -> (id: Int, joinsIdentical: Bool) {
        let (id, joinsIdentical, superseded) = state.withLock { state in
            state.nextID += 1
            var entries = state.slots[slot] ?? [:]
            var superseded: [AsyncStream<Void>.Continuation] = []
            var joinsIdentical = false
            for (other, entry) in entries where !entry.isSuperseded {
                if fingerprint != nil, entry.fingerprint == fingerprint {
                    joinsIdentical = true
                } else {
                    entries[other]?.isSuperseded = true
                    superseded.append(entry.supersede)
                }
            }
            entries[state.nextID] = Entry(fingerprint: fingerprint, supersede: supersede)
            state.slots[slot] = entries
            return (state.nextID, joinsIdentical, superseded)
        }
        for continuation in superseded { continuation.yield() }
        return (id, joinsIdentical)
    }

    private func isSuperseded(_ slot: String, id: Int) -> Bool {
        state.withLock { $0.slots[slot]?[id]?.isSuperseded ?? false }
    }

    private func leave(_ slot: String, id: Int) {
        let entry = state.withLock { state in
            let entry = state.slots[slot]?.removeValue(forKey: id)
            if state.slots[slot]?.isEmpty == true { state.slots[slot] = nil }
            return entry
        }
        entry?.supersede.finish()
    }

    /// How many requests are in `slot` now (for tests).
    func count(in slot: String) -> Int {
        state.withLock { $0.slots[slot]?.count ?? 0 }
    }
}
