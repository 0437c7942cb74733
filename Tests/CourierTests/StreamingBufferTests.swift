import Foundation
import Testing

@testable import Courier

/// The hand-over behind URLSession's streamed bodies: where pausing is possible, the producer is paused at `pauseAt`
/// and resumed once the reader has caught up; it is never told to wait; nothing is held past `limit`.
@Suite struct StreamingBufferTests {
    private static let kibibyte = Data(repeating: 1, count: 1024)

    /// Pulls once, with a continuation that must not be kept (something is buffered or the body ended).
    private func pull(_ buffer: inout StreamingBuffer) async -> StreamingBuffer.Pull {
        var pulled: StreamingBuffer.Pull?
        _ = try? await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
            pulled = buffer.pull(continuation)
            if case .wait = pulled! {
                Issue.record("the reader was made to wait")
            }
            continuation.resume(returning: nil)
        }
        return pulled!
    }

    @Test func theProducerIsPausedAtThePauseMarkOnceAndResumedWhenTheReaderDrainedThreeQuarters() async {
        var buffer = StreamingBuffer(limit: 64 << 10, pauseAt: 8 << 10)
        for _ in 0..<7 {
            guard case .proceed = buffer.push(Self.kibibyte) else {
                Issue.record("paused below the mark")
                return
            }
        }
        guard case .pause = buffer.push(Self.kibibyte) else {
            Issue.record("not paused at the mark")
            return
        }
        guard case .proceed = buffer.push(Self.kibibyte) else {
            Issue.record("told to pause again while paused (bytes a suspend let through)")
            return
        }
        // The reader takes what waits in one piece (9 KiB, within a batch), and so resumes the producer at once.
        guard case .chunk(let chunk, let resume) = await pull(&buffer) else {
            Issue.record("no chunk")
            return
        }
        #expect(chunk.count == 9 << 10)
        #expect(resume)
        // Resumed: the next time the mark is reached, the producer is paused again.
        for _ in 0..<7 { _ = buffer.push(Self.kibibyte) }
        guard case .pause = buffer.push(Self.kibibyte) else {
            Issue.record("not paused after resuming")
            return
        }
    }

    @Test func aReaderStillBehindDoesNotResumeTheProducer() async {
        var buffer = StreamingBuffer(limit: 8 << 20, pauseAt: 4 << 20)
        let chunk = Data(repeating: 2, count: 512 << 10)
        for _ in 0..<7 { _ = buffer.push(chunk) }
        guard case .pause = buffer.push(chunk) else {
            Issue.record("not paused at the mark")
            return
        }
        // 4 MiB wait; a batch of 1 MiB leaves 3 MiB, above a quarter of the mark.
        guard case .chunk(let piece, let resume) = await pull(&buffer) else {
            Issue.record("no chunk")
            return
        }
        #expect(piece.count == StreamingBuffer.batchBytes)
        #expect(!resume)
    }

    @Test func aReaderTakesQueuedChunksInBatchesOfAtMostTheBatchSize() async {
        var buffer = StreamingBuffer(limit: 8 << 20, pauseAt: nil)
        let chunk = Data(repeating: 2, count: 16 << 10)
        let count = 2 * StreamingBuffer.batchBytes / chunk.count + 3
        for _ in 0..<count { _ = buffer.push(chunk) }
        var sizes: [Int] = []
        while case .chunk(let piece, _) = await pull(&buffer) {
            sizes.append(piece.count)
            if sizes.reduce(0, +) == count * chunk.count { break }
        }
        #expect(sizes == [StreamingBuffer.batchBytes, StreamingBuffer.batchBytes, 3 * chunk.count])
    }

    @Test func bytesPastTheLimitEndTheStreamAndWhatWasBufferedIsStillDelivered() async {
        var buffer = StreamingBuffer(limit: 4 << 10, pauseAt: nil)
        for _ in 0..<3 {
            guard case .proceed = buffer.push(Self.kibibyte) else {
                Issue.record("not taken below the limit")
                return
            }
        }
        guard case .overflow = buffer.push(Self.kibibyte) else {
            Issue.record("no overflow at the limit")
            return
        }
        guard case .ended = buffer.finish(.failure(APIError.responseTooLarge(limit: 4 << 10))) else {
            Issue.record("the body had ended already")
            return
        }
        guard case .chunk(let chunk, _) = await pull(&buffer) else {
            Issue.record("buffered bytes lost")
            return
        }
        #expect(chunk.count == 4 << 10)
        guard case .failed = await pull(&buffer) else {
            Issue.record("the end was lost")
            return
        }
    }
}
