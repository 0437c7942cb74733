import Foundation
import Testing

@testable import Courier

/// A server that never answers fails every shape of call with ``APIError/timedOut(_:)`` once the request's timeout
/// passes on the client's clock: not a `CancellationError`, not a hang.
@Suite(.timeLimit(.minutes(1))) struct DeadlineAcrossShapesTests {
    private static let timeout = Duration.seconds(5)

    @Test(arguments: CallShape.allCases)
    func aServerThatNeverAnswersTimesOut(shape: CallShape) async throws {
        let clock = TestClock()
        let silence = CoalescerTestKit.Gate()
        let transport = PipelineTransport { _, _ in
            // Never opened: the transport answers only by stopping when its task is cancelled.
            _ = await silence.wait()
            throw CancellationError()
        }
        let client = PipelineKit.client(transport, clock: clock)
        var call = ShapeCall(shape.idempotentMethod)
        call.timeout = Self.timeout

        let finished = await PipelineKit.run(moving: clock, by: Self.timeout) { [call] in
            await shape.perform(call, on: client)
        }

        let outcome = try #require(finished, "the call did not end when its timeout passed on the clock")
        #expect(outcome.timedOut, "got \(outcome.error.map { "\($0)" } ?? "success")")
        #expect(!(outcome.error is CancellationError))
        #expect(transport.callCount == 1, "no retry policy: one attempt")
    }
}
