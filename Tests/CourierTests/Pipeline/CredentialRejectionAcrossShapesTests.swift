import Foundation
import Testing

@testable import Courier

/// A rejected credential earns every shape of call one refresh and one resend, whether the server rejects it with a
/// `401` or with a status the configuration's `isCredentialRejected` names.
@Suite(.timeLimit(.minutes(1))) struct CredentialRejectionAcrossShapesTests {
    /// A server that rejects ``PipelineKit/staleToken`` with `rejection`'s status and accepts any refreshed token.
    private static func server(rejecting rejection: CredentialRejection) -> PipelineTransport {
        PipelineTransport { received, _ in
            PipelineKit.carriesStaleCredential(received.request)
                ? TransportResponse(statusCode: rejection.status) : PipelineKit.ok()
        }
    }

    @Test(arguments: CallShape.replayable, CredentialRejection.allCases)
    func aRejectedCredentialIsRefreshedOnceAndTheCallResent(shape: CallShape, rejection: CredentialRejection)
        async throws
    {
        let clock = TestClock()
        let (issuer, refresher) = PipelineKit.authenticator(clock: clock)
        let transport = Self.server(rejecting: rejection)
        let client = PipelineKit.client(
            transport, clock: clock, authenticator: refresher, configure: rejection.configure)

        let outcome = await shape.perform(ShapeCall(shape.idempotentMethod), on: client)

        #expect(outcome.error == nil, "\(outcome.error.map { "\($0)" } ?? "")")
        #expect(outcome.status == 200)
        #expect(outcome.body == shape.delivered)
        #expect(issuer.calls == 1, "one refresh")
        #expect(transport.callCount == 2, "the rejected attempt and one resend")
        let tokens = transport.requests.map { $0.headers["Authorization"] }
        #expect(tokens == ["Bearer secret-access-0", "Bearer secret-access-1"])
    }

    /// A one-shot body cannot be sent again: the resend fails clearly rather than going out with no body.
    @Test(arguments: CredentialRejection.allCases)
    func aRejectedOneShotUploadFailsAsNotReplayable(rejection: CredentialRejection) async throws {
        let clock = TestClock()
        let (_, refresher) = PipelineKit.authenticator(clock: clock)
        let transport = Self.server(rejecting: rejection)
        let client = PipelineKit.client(
            transport, clock: clock, authenticator: refresher, configure: rejection.configure)

        let outcome = await CallShape.uploadStream.perform(ShapeCall(.put), on: client)

        #expect(outcome.failedAsNotReplayable, "got \(outcome.error.map { "\($0)" } ?? "success")")
        #expect(transport.callCount == 1, "the one-shot body went out once")
    }
}
