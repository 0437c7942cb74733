import Foundation

/// Moves a ``StreamedBody`` into URLSession one chunk at a time: a task reads the body's ``ByteStream`` and hands
/// each chunk to libcurl's read callback, which blocks on URLSession's work queue until the chunk is there.
///
/// Why an `InputStream`: FoundationNetworking reads a request's `httpBodyStream` synchronously, on the session's
/// work queue, for as long as the stream says it has bytes; it has no asynchronous body source. The stream of a
/// streamed exchange belongs to a session of its own (see ``URLSessionStreamingExchange``), so blocking that queue
/// stalls only this transfer. At most one chunk is held here: the task reads the next only once libcurl took the
/// last, so a body of any size costs one chunk of memory.
final class UploadPump: Sendable {
    private struct State {
        var slot: Data?
        var offset = 0
        var producer: CheckedContinuation<Void, Never>?
        var readerWaiting = false
        var finished: Result<Void, any Error>?
        var cancelled = false
        var task: Task<Void, Never>?
    }

    private let state = Locked(State())
    private let wake = DispatchSemaphore(value: 0)
    /// Told how many bytes libcurl took, each time it takes some.
    private let onSent: @Sendable (Int) -> Void

    init(onSent: @escaping @Sendable (Int) -> Void) {
        self.onSent = onSent
    }

    /// The error the body's stream ended with, if it did (a file that could not be read): the cause to report
    /// rather than libcurl's "callback aborted".
    var failure: (any Error)? {
        state.withLock { state in
            if case .failure(let error)? = state.finished { return error }
            return nil
        }
    }

    /// Starts reading `chunks` in a task of its own.
    func start(_ chunks: ByteStream) {
        let task = Task { [self] in
            do {
                for try await chunk in chunks {
                    guard await put(chunk) else { return }
                }
                finish(.success(()))
            } catch {
                finish(.failure(error))
            }
        }
        let cancelled = state.withLock { state in
            state.task = task
            return state.cancelled
        }
        if cancelled { task.cancel() }
    }

    /// Stops: the blocked read returns an error (libcurl aborts the upload) and the reading task is cancelled.
    func cancel() {
        let (producer, wakeReader, task) = state.withLock { state in
            state.cancelled = true
            defer {
                state.producer = nil
                state.readerWaiting = false
            }
            return (state.producer, state.readerWaiting, state.task)
        }
        producer?.resume()
        if wakeReader { wake.signal() }
        task?.cancel()
    }

    /// Offers one chunk and waits until libcurl has taken all of it; false once the upload was cancelled.
    private func put(_ chunk: Data) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (accepted, wakeReader) = state.withLock { state -> (Bool, Bool) in
                guard !state.cancelled else { return (false, false) }
                state.slot = chunk
                state.offset = 0
                state.producer = continuation
                defer { state.readerWaiting = false }
                return (true, state.readerWaiting)
            }
            if !accepted { continuation.resume() }
            if wakeReader { wake.signal() }
        }
        return !state.withLock { $0.cancelled }
    }

    private func finish(_ result: Result<Void, any Error>) {
        let wakeReader = state.withLock { state in
            state.finished = result
            defer { state.readerWaiting = false }
            return state.readerWaiting
        }
        if wakeReader { wake.signal() }
    }

    /// libcurl's read: copies up to `length` bytes, blocking until some are there; 0 at the end, -1 on failure.
    func read(into buffer: UnsafeMutablePointer<UInt8>, length: Int) -> Int {
        while true {
            enum Step {
                case copied(Int, CheckedContinuation<Void, Never>?)
                case done(Int)
                case wait
            }
            let step = state.withLock { state -> Step in
                if state.cancelled { return .done(-1) }
                if let slot = state.slot, state.offset < slot.count {
                    let count = min(length, slot.count - state.offset)
                    slot.withUnsafeBytes { bytes in
                        let start = bytes.baseAddress!.advanced(by: state.offset)
                        buffer.update(from: start.assumingMemoryBound(to: UInt8.self), count: count)
                    }
                    state.offset += count
                    guard state.offset == slot.count else { return .copied(count, nil) }
                    state.slot = nil
                    defer { state.producer = nil }
                    return .copied(count, state.producer)
                }
                switch state.finished {
                case .success?: return .done(0)
                case .failure?: return .done(-1)
                case nil:
                    state.readerWaiting = true
                    return .wait
                }
            }
            switch step {
            case .copied(let count, let producer):
                producer?.resume()
                onSent(count)
                return count
            case .done(let result):
                return result
            case .wait:
                wake.wait()
            }
        }
    }
}

/// The `InputStream` FoundationNetworking reads a streamed request body from: every read is a read of the
/// ``UploadPump``. It always says it has bytes available, because FoundationNetworking ends the body at the first
/// `false`; the end is a read of 0.
final class PumpInputStream: InputStream {
    private let pump: UploadPump
    private var status: Stream.Status = .notOpen

    init(_ pump: UploadPump) {
        self.pump = pump
        super.init(data: Data())
    }

    override func open() { status = .open }
    override func close() { status = .closed }
    override var streamStatus: Stream.Status { status }
    override var hasBytesAvailable: Bool { status == .open }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        let count = pump.read(into: buffer, length: length)
        if count <= 0 { status = count == 0 ? .atEnd : .error }
        return count
    }
}
