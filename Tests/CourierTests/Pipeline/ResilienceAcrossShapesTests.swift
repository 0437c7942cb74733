import Foundation
import Testing

@testable import Courier

/// The resilience gates sit in the one retry loop, so every shape of call passes them: once an origin's breaker has
/// opened, a stream, a download, an upload or an event stream fails fast like `send`, and sends nothing.
@Suite(.timeLimit(.minutes(1))) struct ResilienceAcrossShapesTests {
    @Test(arguments: CallShape.allCases)
    func anOpenCircuitFailsEveryShapeFastAndSendsNothing(shape: CallShape) async throws {
        let transport = PipelineTransport { _, _ in TransportResponse(statusCode: 503) }
        let client = PipelineKit.client(transport) {
            $0.resilience.circuitBreaker = CircuitBreaker.Configuration(
                failureRatio: 0.5, minimumThroughput: 3, breakDuration: .seconds(5))
        }
        // Three failures through this shape open the breaker of the origin.
        for _ in 0..<3 { _ = await shape.perform(ShapeCall(shape.idempotentMethod), on: client) }
        #expect(transport.callCount == 3)

        let outcome = await shape.perform(ShapeCall(shape.idempotentMethod), on: client)

        #expect(transport.callCount == 3, "the fourth call was not sent")
        guard case .circuitOpen(_, let retryAfter)? = outcome.error as? APIError else {
            Issue.record("expected circuitOpen, got \(String(describing: outcome.error))")
            return
        }
        #expect(retryAfter > .zero && retryAfter <= .seconds(5))
    }

    @Test(arguments: CallShape.allCases)
    func aProbeOfEveryShapeClosesTheCircuitWhenItSucceeds(shape: CallShape) async throws {
        let clock = TestClock()
        let healthy = Locked(false)
        let transport = PipelineTransport { _, _ in
            healthy.withLock { $0 }
                ? PipelineKit.ok(headers: ["Content-Type": "text/event-stream"]) : TransportResponse(statusCode: 503)
        }
        let client = PipelineKit.client(transport, clock: clock) {
            $0.resilience.circuitBreaker = CircuitBreaker.Configuration(
                failureRatio: 0.5, minimumThroughput: 3, breakDuration: .seconds(5), probes: 1)
        }
        for _ in 0..<3 { _ = await shape.perform(ShapeCall(shape.idempotentMethod), on: client) }
        healthy.withLock { $0 = true }
        clock.advance(by: .seconds(6))

        // The probe: half-open lets one call through, and its success must close the breaker.
        let probe = await shape.perform(ShapeCall(shape.idempotentMethod), on: client)
        #expect(probe.error == nil, "\(probe.error.map { "\($0)" } ?? "")")
        let after = await shape.perform(ShapeCall(shape.idempotentMethod), on: client)

        #expect(after.error == nil, "the breaker closed after the probe: \(after.error.map { "\($0)" } ?? "")")
        #expect(transport.callCount == 5)
    }
}
