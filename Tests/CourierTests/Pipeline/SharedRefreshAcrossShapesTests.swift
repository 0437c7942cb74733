import Foundation
import Testing

@testable import Courier

/// Many calls rejected together cause one refresh, whatever their shape, and all of them succeed on the resend.
@Suite(.timeLimit(.minutes(1))) struct SharedRefreshAcrossShapesTests {
    private static let callers = 20

    // The one-shot stream upload is left out: its resend cannot happen (see `CredentialRejectionAcrossShapesTests`).
    @Test(arguments: CallShape.replayable, CredentialRejection.allCases)
    func manyRejectedCallsShareOneRefresh(shape: CallShape, rejection: CredentialRejection) async throws {
        let clock = TestClock()
        let (issuer, refresher) = PipelineKit.authenticator(clock: clock)
        // Every rejection waits until all the callers were rejected, so none of them starts after the refresh.
        let rejections = CoalescerTestKit.Gate()
        let transport = PipelineTransport { received, _ in
            guard PipelineKit.carriesStaleCredential(received.request) else { return PipelineKit.ok() }
            _ = await rejections.wait()
            return TransportResponse(statusCode: rejection.status)
        }
        let client = PipelineKit.client(transport, clock: clock, authenticator: refresher) { configuration in
            rejection.configure(&configuration)
            configuration.isCoalescingEnabled = false
        }

        let calls = (0..<Self.callers).map { index in
            Task { await shape.perform(ShapeCall(shape.idempotentMethod, path: "/resource/\(index)"), on: client) }
        }
        let allRejected = await CoalescerTestKit.eventually { transport.callCount >= Self.callers }
        await rejections.open()
        var outcomes: [CallOutcome] = []
        for call in calls { outcomes.append(await call.value) }

        #expect(allRejected, "every caller reached the server with the stale credential")
        #expect(issuer.calls == 1, "one refresh for \(Self.callers) rejected calls")
        let failures = outcomes.compactMap(\.error).map { "\($0)" }
        #expect(failures.isEmpty, "\(failures.count) calls failed, first: \(failures.first ?? "")")
        #expect(outcomes.filter { $0.body == shape.delivered }.count == Self.callers)
        #expect(transport.callCount == 2 * Self.callers, "each call: one rejected attempt and one resend")
    }
}
