import Foundation
import Testing

@testable import Courier

/// The retry policy applies to every shape of call: a `503` is retried the number of times the policy says, after
/// the delay the server's `Retry-After` asks for; a body that cannot be produced again is never resent.
@Suite(.timeLimit(.minutes(1))) struct RetryAcrossShapesTests {
    private static func retries(_ events: [ClientEvent]) -> [(attempt: Int, delay: Duration)] {
        events.compactMap { event in
            guard case .retryScheduled(let attempt, let delay, _) = event.kind else { return nil }
            return (attempt, delay)
        }
    }

    @Test(arguments: CallShape.replayable)
    func a503IsRetriedOnceThenSucceeds(shape: CallShape) async throws {
        let transport = PipelineTransport { _, index in index == 0 ? TransportResponse(statusCode: 503) : .okay }
        let client = PipelineKit.client(transport, retryPolicy: PipelineKit.immediateRetries)
        let events = client.events

        let outcome = await shape.perform(ShapeCall(shape.idempotentMethod), on: client)

        #expect(outcome.error == nil, "\(outcome.error.map { "\($0)" } ?? "")")
        #expect(outcome.body == shape.delivered)
        #expect(transport.callCount == 2, "the 503 and one retry")
        if let attempts = outcome.attempts { #expect(attempts == 2) }
        let retries = Self.retries(await EventTestKit.collect(events, from: client.eventLog))
        #expect(retries.map(\.attempt) == [1], "one retry, after attempt 1")
    }

    @Test(arguments: CallShape.replayable)
    func retryAfterIsHonoured(shape: CallShape) async throws {
        let clock = TestClock()
        let transport = PipelineTransport { _, index in
            index == 0 ? TransportResponse(statusCode: 503, headers: ["Retry-After": "7"]) : .okay
        }
        // A backoff of 1 s: only the server's 7 s can explain a 7 s wait.
        let client = PipelineKit.client(
            transport, clock: clock, retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: .seconds(1), jitter: .none))
        let events = client.events

        let finished = await PipelineKit.run(moving: clock, by: .seconds(7)) {
            await shape.perform(ShapeCall(shape.idempotentMethod), on: client)
        }

        let outcome = try #require(finished, "the call never ended while the clock moved by the Retry-After")
        #expect(outcome.error == nil, "\(outcome.error.map { "\($0)" } ?? "")")
        #expect(transport.callCount == 2)
        #expect(clock.requestedSleeps.contains(.seconds(7)), "slept for the Retry-After on the client's clock")
        let retries = Self.retries(await EventTestKit.collect(events, from: client.eventLog))
        #expect(retries.map(\.delay) == [.seconds(7)])
    }

    /// A one-shot body cannot go out twice: the retry fails clearly, and nothing is resent.
    @Test func aOneShotUploadIsNotRetriedButFailsAsNotReplayable() async throws {
        let transport = PipelineTransport { _, index in index == 0 ? TransportResponse(statusCode: 503) : .okay }
        let client = PipelineKit.client(transport, retryPolicy: PipelineKit.immediateRetries)

        let outcome = await CallShape.uploadStream.perform(ShapeCall(.put), on: client)

        #expect(outcome.failedAsNotReplayable, "got \(outcome.error.map { "\($0)" } ?? "success")")
        #expect(transport.callCount == 1)
    }
}
