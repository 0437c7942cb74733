import Foundation
import Testing

@testable import Courier

/// Every shape of call tells its steps in the same order, under one call id: started, each attempt sent and
/// answered, the retry between them, finished.
@Suite(.timeLimit(.minutes(1))) struct EventOrderAcrossShapesTests {
    /// A step without its timings and headers, which differ from run to run.
    private static func step(_ kind: ClientEvent.Kind) -> String {
        switch kind {
        case .requestStarted: "started"
        case .attemptSent(let attempt, _): "attempt \(attempt) sent"
        case .responseReceived(let attempt, let status, _, _): "attempt \(attempt) answered \(status)"
        case .retryScheduled(let attempt, _, let reason): "retry after attempt \(attempt): \(reason)"
        case .requestFinished(let source, let status, _): "finished \(status) from \(source)"
        case .requestFailed: "failed"
        default: kind.description
        }
    }

    /// What a call answered 503, then 200, tells: the one-shot upload cannot be retried, so it fails after the 503.
    private static func expectedSteps(_ shape: CallShape) -> [String] {
        guard shape.isReplayable else { return ["started", "attempt 1 sent", "attempt 1 answered 503", "failed"] }
        return [
            "started", "attempt 1 sent", "attempt 1 answered 503", "retry after attempt 1: status 503",
            "attempt 2 sent", "attempt 2 answered 200", "finished 200 from network",
        ]
    }

    @Test(arguments: CallShape.allCases)
    func theStepsOfACallComeInOrder(shape: CallShape) async throws {
        let transport = PipelineTransport { _, index in index == 0 ? TransportResponse(statusCode: 503) : .okay }
        let client = PipelineKit.client(transport, retryPolicy: PipelineKit.immediateRetries)
        let stream = client.events

        _ = await shape.perform(ShapeCall(shape.idempotentMethod), on: client)

        let events = await EventTestKit.collect(stream, from: client.eventLog)
        #expect(events.map { Self.step($0.kind) } == Self.expectedSteps(shape))
        #expect(Set(events.map(\.callID)).count == 1, "one call id: \(events.map(\.callID))")
        let times = events.map(\.at)
        #expect(times == times.sorted(), "never back in time")
    }
}
