import Foundation
import Testing

@testable import Courier

/// The hand-over behind URLSession's streamed bodies: the producer is held back at `pauseAt` and woken when the
/// reader has caught up, a producer whose wait ran out is not held again until then, and nothing is held past
/// `limit`.
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

    @Test func theProducerWaitsAtThePauseMarkAndIsWokenOnceTheReaderDrainedThreeQuarters() async {
        var buffer = StreamingBuffer(limit: 64 << 10, pauseAt: 8 << 10)
        for _ in 0..<7 {
            guard case .proceed = buffer.push(Self.kibibyte) else {
                Issue.record("held back below the mark")
                return
            }
        }
        guard case .wait = buffer.push(Self.kibibyte) else {
            Issue.record("not held back at the mark")
            return
        }
        // The reader takes what waits in one piece (8 KiB, within a batch), and so wakes the producer at once.
        guard case .chunk(let chunk, let wake) = await pull(&buffer) else {
            Issue.record("no chunk")
            return
        }
        #expect(chunk.count == 8 << 10)
        #expect(wake)
    }

    @Test func aReaderTakesQueuedChunksInBatchesOfAtMostTheBatchSize() async {
        var buffer = StreamingBuffer(limit: 8 << 20, pauseAt: 8 << 20)
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

    @Test func aProducerWhoseWaitRanOutIsNotHeldAgainUntilTheReaderCaughtUp() async {
        var buffer = StreamingBuffer(limit: 64 << 10, pauseAt: 8 << 10)
        for _ in 0..<7 { _ = buffer.push(Self.kibibyte) }
        guard case .wait = buffer.push(Self.kibibyte) else {
            Issue.record("not held back at the mark")
            return
        }
        let wokenMeanwhile = buffer.producerStoppedWaiting()
        #expect(!wokenMeanwhile)  // nobody woke it
        for _ in 0..<8 {
            guard case .proceed = buffer.push(Self.kibibyte) else {
                Issue.record("held back again")
                return
            }
        }
        guard case .chunk(_, let wake) = await pull(&buffer) else {
            Issue.record("no chunk")
            return
        }
        #expect(!wake)  // it is not waiting
        // Caught up: the next time the mark is reached, the producer is held back again.
        for _ in 0..<7 { _ = buffer.push(Self.kibibyte) }
        guard case .wait = buffer.push(Self.kibibyte) else {
            Issue.record("not held back after catching up")
            return
        }
    }

    @Test func aWakeUpThatRacedTheEndOfTheWaitIsReported() async {
        var buffer = StreamingBuffer(limit: 64 << 10, pauseAt: 8 << 10)
        for _ in 0..<8 { _ = buffer.push(Self.kibibyte) }
        guard case .chunk(_, let wake) = await pull(&buffer), wake else {
            Issue.record("not woken")
            return
        }
        let wokenMeanwhile = buffer.producerStoppedWaiting()
        #expect(wokenMeanwhile)  // the producer must take the wake-up that was sent
    }

    @Test func bytesPastTheLimitEndTheStreamAndWhatWasBufferedIsStillDelivered() async {
        var buffer = StreamingBuffer(limit: 4 << 10, pauseAt: 2 << 10)
        _ = buffer.push(Self.kibibyte)
        _ = buffer.push(Self.kibibyte)
        let wokenMeanwhile = buffer.producerStoppedWaiting()
        #expect(!wokenMeanwhile)
        _ = buffer.push(Self.kibibyte)
        guard case .overflow = buffer.push(Self.kibibyte) else {
            Issue.record("no overflow at the limit")
            return
        }
        let ended = buffer.finish(.failure(APIError.responseTooLarge(limit: 4 << 10)))
        #expect(ended != nil)
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
