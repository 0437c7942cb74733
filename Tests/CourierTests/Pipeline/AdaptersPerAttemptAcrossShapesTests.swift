import Foundation
import Testing

@testable import Courier

/// Adapters run once for each attempt of every shape of call, a retry's and a resend's included, and what they
/// write is what the attempt carries.
@Suite(.timeLimit(.minutes(1))) struct AdaptersPerAttemptAcrossShapesTests {
    /// Numbers the requests it adapts in `X-Adapted`.
    private final class CountingAdapter: RequestAdapter {
        private let count = Locked(0)

        var calls: Int { count.withLock { $0 } }

        func adapt(_ request: TransportRequest) async throws -> TransportRequest {
            let number = count.withLock { count in
                count += 1
                return count
            }
            var adapted = request
            adapted.headers["X-Adapted"] = String(number)
            return adapted
        }
    }

    /// A 503 retried, then a success: two attempts, two adapter runs, each attempt carrying its own.
    @Test(arguments: CallShape.replayable)
    func everyRetryIsAdaptedAgain(shape: CallShape) async throws {
        let adapter = CountingAdapter()
        let transport = PipelineTransport { _, index in index == 0 ? TransportResponse(statusCode: 503) : .okay }
        let client = PipelineKit.client(transport, retryPolicy: PipelineKit.immediateRetries) {
            $0.adapters = [adapter]
        }

        let outcome = await shape.perform(ShapeCall(shape.idempotentMethod), on: client)

        #expect(outcome.error == nil, "\(outcome.error.map { "\($0)" } ?? "")")
        #expect(transport.callCount == 2)
        #expect(adapter.calls == transport.callCount, "one adapter run per attempt")
        #expect(transport.requests.map { $0.headers["X-Adapted"] } == ["1", "2"])
    }

    /// The resend after a rejected credential is an attempt too.
    @Test(arguments: CallShape.replayable)
    func theResendAfterARejectedCredentialIsAdaptedAgain(shape: CallShape) async throws {
        let clock = TestClock()
        let (_, refresher) = PipelineKit.authenticator(clock: clock)
        let adapter = CountingAdapter()
        let transport = PipelineTransport { received, _ in
            PipelineKit.carriesStaleCredential(received.request) ? TransportResponse(statusCode: 401) : .okay
        }
        let client = PipelineKit.client(transport, clock: clock, authenticator: refresher) { $0.adapters = [adapter] }

        let outcome = await shape.perform(ShapeCall(shape.idempotentMethod), on: client)

        #expect(outcome.error == nil, "\(outcome.error.map { "\($0)" } ?? "")")
        #expect(transport.callCount == 2)
        #expect(adapter.calls == transport.callCount, "one adapter run per attempt")
        #expect(transport.requests.map { $0.headers["X-Adapted"] } == ["1", "2"])
    }

    /// The one-shot stream upload has a single attempt (it cannot be retried): adapted once.
    @Test func aOneShotUploadIsAdaptedOnce() async throws {
        let adapter = CountingAdapter()
        let transport = PipelineTransport { _, _ in .okay }
        let client = PipelineKit.client(transport, retryPolicy: PipelineKit.immediateRetries) {
            $0.adapters = [adapter]
        }

        let outcome = await CallShape.uploadStream.perform(ShapeCall(.put), on: client)

        #expect(outcome.error == nil, "\(outcome.error.map { "\($0)" } ?? "")")
        #expect(transport.callCount == 1)
        #expect(adapter.calls == 1)
        #expect(transport.requests.map { $0.headers["X-Adapted"] } == ["1"])
    }
}

extension TransportResponse {
    /// ``PipelineKit/ok(headers:)``.
    static var okay: TransportResponse { PipelineKit.ok() }
}
