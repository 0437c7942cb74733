import Foundation
import Testing

@testable import Courier

/// An unsafe method is never resent by a retry, for any shape of call, unless the request carries an
/// `Idempotency-Key` (the server then does the work once however many times it is sent).
@Suite(.timeLimit(.minutes(1))) struct UnsafeMethodRetryAcrossShapesTests {
    private static func flakyServer() -> PipelineTransport {
        PipelineTransport { _, index in index == 0 ? TransportResponse(statusCode: 503) : .okay }
    }

    @Test(arguments: CallShape.allCases)
    func aPOSTIsNotRetriedOn503(shape: CallShape) async throws {
        let transport = Self.flakyServer()
        let client = PipelineKit.client(transport, retryPolicy: PipelineKit.immediateRetries)

        let outcome = await shape.perform(ShapeCall(.post), on: client)

        #expect(outcome.apiError?.statusCode == 503, "got \(outcome.error.map { "\($0)" } ?? "success")")
        #expect(transport.callCount == 1, "a POST goes out once")
    }

    // The one-shot stream upload is left out: even with a key it cannot be resent (see `RetryAcrossShapesTests`).
    @Test(arguments: CallShape.replayable)
    func aPOSTWithAnIdempotencyKeyIsRetried(shape: CallShape) async throws {
        let transport = Self.flakyServer()
        let client = PipelineKit.client(transport, retryPolicy: PipelineKit.immediateRetries)
        var call = ShapeCall(.post)
        call.headers["Idempotency-Key"] = "order-42"

        let outcome = await shape.perform(call, on: client)

        #expect(outcome.error == nil, "\(outcome.error.map { "\($0)" } ?? "")")
        #expect(transport.callCount == 2)
        #expect(transport.requests.allSatisfy { $0.headers["Idempotency-Key"] == "order-42" })
    }
}
