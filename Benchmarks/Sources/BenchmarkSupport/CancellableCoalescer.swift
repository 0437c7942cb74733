import Synchronization

/// A coalescer with the one guarantee the actor pattern leaves out: a caller whose task is cancelled leaves at once with
/// `CancellationError`, and the flight goes on for the others. This is what a user writes to get the per-caller
/// cancellation Courier gives every joiner (without its per-caller deadline, events or cache), so the report can show
/// what that guarantee costs by itself.
///
/// Why not the actor: its callers wait on `Task.value` of the shared task, which no caller's cancellation interrupts.
/// Here each caller waits on a continuation of its own, registered under a lock, and a cancellation handler takes it
/// out. A lock rather than an actor because the handler runs synchronously wherever the cancellation happens: with an
/// actor it would need a task to hop in, and every caller two hops. As a generic actor it also ran unspecialized from
/// this module (its isolated methods are not specialized where they are called), so its numbers were the generic
/// code's, not what a user writes for their own type.
public final class CancellableCoalescer<Value: Sendable>: FetchStrategy {
    @usableFromInline typealias Waiter = UnsafeContinuation<Value, any Error>

    @usableFromInline struct State {
        /// The callers waiting for each key's flight, with the id each was given.
        @usableFromInline var waiting: [String: [(id: UInt64, waiter: Waiter)]] = [:]
        @usableFromInline var lastID: UInt64 = 0

        @inlinable init() {}
    }

    @usableFromInline let upstream: @Sendable (String) async throws -> Value
    @usableFromInline let state = Mutex(State())

    /// Wraps the upstream call.
    public init(upstream: @escaping @Sendable (String) async throws -> Value) {
        self.upstream = upstream
    }

    /// `"lock + continuations, cancellable"`.
    public var name: String { "lock + continuations, cancellable" }

    /// Waits for the flight of `key`, starting it when there is none; leaves at once when the caller is cancelled.
    @inlinable
    public func fetch(_ key: String) async throws -> Value {
        let id = state.withLock { state in
            state.lastID &+= 1
            return state.lastID
        }
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { waiter in register(waiter, id: id, for: key) }
        } onCancel: {
            leave(key, id: id)
        }
    }

    /// Adds a caller to the flight of `key`, and starts the flight when it is the first. A caller cancelled before it
    /// got here is not added: its handler has run already and found nothing to take out.
    @inlinable
    func register(_ waiter: Waiter, id: UInt64, for key: String) {
        let starts = state.withLock { state -> Bool? in
            guard !Task.isCancelled else { return nil }
            guard state.waiting[key] == nil else {
                state.waiting[key]!.append((id, waiter))
                return false
            }
            state.waiting[key] = [(id, waiter)]
            return true
        }
        switch starts {
        case nil:
            waiter.resume(throwing: CancellationError())
        case true?:
            let upstream = upstream
            Task {
                let result = await Result { try await upstream(key) }
                let waiters = state.withLock { $0.waiting.removeValue(forKey: key) } ?? []
                for (_, waiter) in waiters { waiter.resume(with: result) }
            }
        case false?:
            break
        }
    }

    /// Takes a cancelled caller out of its flight, if the flight has not landed yet.
    @inlinable
    func leave(_ key: String, id: UInt64) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiting[key]?.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiting[key]!.remove(at: index).waiter
        }
        waiter?.resume(throwing: CancellationError())
    }

    /// How many callers wait for the flight of `key` (for the harness's check of the cancellation itself).
    public func waiterCount(for key: String) -> Int {
        state.withLock { $0.waiting[key]?.count ?? 0 }
    }
}
