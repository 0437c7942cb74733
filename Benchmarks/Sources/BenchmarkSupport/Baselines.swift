import Dispatch
import Foundation

/// What every strategy in the report does: answer "give me the body for this key".
public protocol FetchStrategy: Sendable {
    /// The strategy's name in tables and charts.
    var name: String { get }
    /// Fetches the body for `key`, coalescing or not as the strategy does.
    func fetch(_ key: String) async throws -> Data
}

/// No coalescing: every caller sends its own request.
public struct Uncoalesced: FetchStrategy {
    private let upstream: @Sendable (String) async throws -> Data

    /// Wraps the upstream call.
    public init(upstream: @escaping @Sendable (String) async throws -> Data) {
        self.upstream = upstream
    }

    /// `"no coalescing"`.
    public var name: String { "no coalescing" }

    /// Calls the upstream directly.
    public func fetch(_ key: String) async throws -> Data {
        try await upstream(key)
    }
}

/// The pattern blog posts teach: an actor holding `[String: Task]`, the task removed when it ends.
public actor TaskDictionaryCoalescer: FetchStrategy {
    private let upstream: @Sendable (String) async throws -> Data
    private var inFlight: [String: Task<Data, any Error>] = [:]

    /// Wraps the upstream call.
    public init(upstream: @escaping @Sendable (String) async throws -> Data) {
        self.upstream = upstream
    }

    /// `"actor + [String: Task]"`.
    public nonisolated var name: String { "actor + [String: Task]" }

    /// Joins the task in flight for `key`, or starts one.
    public func fetch(_ key: String) async throws -> Data {
        if let task = inFlight[key] { return try await task.value }
        let upstream = upstream
        let task = Task { try await upstream(key) }
        inFlight[key] = task
        defer { inFlight[key] = nil }
        return try await task.value
    }
}

/// The callback pattern: a concurrent `DispatchQueue` with barrier writes guarding a dictionary of
/// completion arrays. The queue, not the compiler, protects the dictionary; that is the pattern.
public final class CallbackCoalescer: FetchStrategy, @unchecked Sendable {
    private typealias Completion = @Sendable (Result<Data, any Error>) -> Void

    private let upstream: @Sendable (String) async throws -> Data
    private let queue = DispatchQueue(label: "callback-coalescer", attributes: .concurrent)
    private var waiting: [String: [Completion]] = [:]

    /// Wraps the upstream call.
    public init(upstream: @escaping @Sendable (String) async throws -> Data) {
        self.upstream = upstream
    }

    /// `"DispatchQueue + callbacks"`.
    public var name: String { "DispatchQueue + callbacks" }

    /// Bridges the callback API to async, as a caller of such a library would.
    public func fetch(_ key: String) async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            fetch(key) { continuation.resume(with: $0) }
        }
    }

    private func fetch(_ key: String, completion: @escaping Completion) {
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
    init(catching body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
