import Foundation

/// How far a download or an upload has got.
public struct TransferProgress: Sendable, Hashable {
    /// Bytes moved so far in the current attempt (an upload that is retried starts again from 0).
    public var completedBytes: Int64
    /// The total in bytes, when known: the body's length for an upload, `Content-Length` for a download.
    public var totalBytes: Int64?

    /// Creates a progress value.
    ///
    /// - Parameters:
    ///   - completedBytes: Bytes moved so far.
    ///   - totalBytes: The total, when known.
    public init(completedBytes: Int64, totalBytes: Int64?) {
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
    }

    /// The share done, from 0 to 1, when the total is known.
    public var fractionCompleted: Double? {
        guard let totalBytes, totalBytes > 0 else { return nil }
        return min(1, Double(completedBytes) / Double(totalBytes))
    }
}

/// A download or upload in progress: its ``progress`` as an asynchronous sequence, and its result.
///
/// The transfer starts when it is created and runs in a task of its own. Awaiting ``value`` waits for it;
/// cancelling the task that awaits (or calling ``cancel()``) stops it: a download then leaves no file behind.
///
/// ```swift
/// let transfer = client.download(APIRequest<Void>.get("/backups/latest"), to: destination)
/// Task {
///     for await progress in transfer.progress {
///         print(progress.fractionCompleted ?? 0)
///     }
/// }
/// let response = try await transfer.value
/// ```
public struct Transfer<Value: Sendable>: Sendable {
    /// Progress updates, newest first: a reader that falls behind skips to the latest rather than queueing them.
    /// Ends when the transfer does.
    public let progress: AsyncStream<TransferProgress>
    private let task: Task<Value, any Error>

    init(_ operation: @escaping @Sendable (ProgressReporter) async throws -> Value) {
        let (progress, continuation) = AsyncStream.makeStream(
            of: TransferProgress.self, bufferingPolicy: .bufferingNewest(1))
        self.progress = progress
        let reporter = ProgressReporter(continuation)
        task = Task {
            defer { continuation.finish() }
            return try await operation(reporter)
        }
    }

    /// The result, once the transfer is complete.
    ///
    /// - Throws: ``APIError`` for every failure, `CancellationError` when the transfer was cancelled. Cancelling the
    ///   task that awaits cancels the transfer.
    public var value: Value {
        get async throws {
            try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        }
    }

    /// Stops the transfer.
    public func cancel() {
        task.cancel()
    }
}

/// Counts a transfer's bytes and reports them to its ``Transfer/progress``.
final class ProgressReporter: Sendable {
    private struct State {
        var completed: Int64 = 0
        var total: Int64?
    }

    private let state = Locked(State())
    private let continuation: AsyncStream<TransferProgress>.Continuation

    init(_ continuation: AsyncStream<TransferProgress>.Continuation) {
        self.continuation = continuation
    }

    /// Starts counting again from 0 (a new attempt), with `total` when known.
    func restart(total: Int?) {
        let progress = state.withLock { state in
            state = State(completed: 0, total: total.map(Int64.init))
            return TransferProgress(completedBytes: 0, totalBytes: state.total)
        }
        continuation.yield(progress)
    }

    /// Adds `count` bytes.
    func add(_ count: Int) {
        let progress = state.withLock { state in
            state.completed += Int64(count)
            return TransferProgress(completedBytes: state.completed, totalBytes: state.total)
        }
        continuation.yield(progress)
    }
}
