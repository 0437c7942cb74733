import Dispatch
import Foundation

/// What every strategy in the report does: answer "give me the value for this key", where the value is the body
/// (`Data`) or the body decoded (the report's decoded variant).
///
/// Every strategy's `fetch` is `@inlinable`, so that it is specialized for its value type in the module that measures
/// it, as a coalescer a user writes for their own type is, and as a user's call of Courier's generic `send` is. Run
/// generic from this module, each strategy paid for looking up its generic types' metadata on every call, and Courier's
/// `send`, written to be specialized where it is called, paid most (`Docs/Benchmarks.md`, session 20).
public protocol FetchStrategy<Value>: Sendable {
    /// What a caller receives.
    associatedtype Value: Sendable
    /// The strategy's name in tables and charts.
    var name: String { get }
    /// Fetches the value for `key`, coalescing or not as the strategy does.
    func fetch(_ key: String) async throws -> Value
}

/// No coalescing: every caller sends its own request (and decodes its own copy in the decoded variant).
public struct Uncoalesced<Value: Sendable>: FetchStrategy {
    @usableFromInline let upstream: @Sendable (String) async throws -> Value

    /// Wraps the upstream call.
    public init(upstream: @escaping @Sendable (String) async throws -> Value) {
        self.upstream = upstream
    }

    /// `"no coalescing"`.
    public var name: String { "no coalescing" }

    /// Calls the upstream directly.
    @inlinable
    public func fetch(_ key: String) async throws -> Value {
        try await upstream(key)
    }
}

/// The pattern blog posts teach: an actor holding `[String: Task]`, the task removed when it ends. Whatever the
/// upstream closure does (fetch, or fetch and decode) runs once per flight, in the shared task.
public actor TaskDictionaryCoalescer<Value: Sendable>: FetchStrategy {
    @usableFromInline let upstream: @Sendable (String) async throws -> Value
    @usableFromInline var inFlight: [String: Task<Value, any Error>] = [:]

    /// Wraps the upstream call.
    public init(upstream: @escaping @Sendable (String) async throws -> Value) {
        self.upstream = upstream
    }

    /// `"actor + [String: Task]"`.
    public nonisolated var name: String { "actor + [String: Task]" }

    /// Joins the task in flight for `key`, or starts one.
    @inlinable
    public func fetch(_ key: String) async throws -> Value {
        if let task = inFlight[key] { return try await task.value }
        let upstream = upstream
        let task = Task { try await upstream(key) }
        inFlight[key] = task
        defer { inFlight[key] = nil }
        return try await task.value
    }
}

/// The callback pattern: a concurrent `DispatchQueue` with barrier writes guarding a dictionary of
/// completion arrays. The queue, not the compiler, protects the dictionary; that is the pattern. The upstream
/// closure runs once per flight and every completion gets its result.
public final class CallbackCoalescer<Value: Sendable>: FetchStrategy, @unchecked Sendable {
    @usableFromInline typealias Completion = @Sendable (Result<Value, any Error>) -> Void

    @usableFromInline let upstream: @Sendable (String) async throws -> Value
    @usableFromInline let queue = DispatchQueue(label: "callback-coalescer", attributes: .concurrent)
    @usableFromInline var waiting: [String: [Completion]] = [:]

    /// Wraps the upstream call.
    public init(upstream: @escaping @Sendable (String) async throws -> Value) {
        self.upstream = upstream
    }

    /// `"DispatchQueue + callbacks"`.
    public var name: String { "DispatchQueue + callbacks" }

    /// Bridges the callback API to async, as a caller of such a library would.
    @inlinable
    public func fetch(_ key: String) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            fetch(key) { continuation.resume(with: $0) }
        }
    }

    @inlinable
    func fetch(_ key: String, completion: @escaping Completion) {
        queue.async(flags: .barrier) {
            if self.waiting[key] != nil {
                self.waiting[key]?.append(completion)
                return
            }
            self.waiting[key] = [completion]
            let upstream = self.upstream
            Task {
                let result = await Result(catching: { try await upstream(key) })
                self.queue.async(flags: .barrier) {
                    let completions = self.waiting.removeValue(forKey: key) ?? []
                    for completion in completions { completion(result) }
                }
            }
        }
    }
}

extension Result where Failure == any Error {
    /// Runs an async throwing body and captures its outcome.
    @inlinable
    init(catching body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
