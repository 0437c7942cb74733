import Foundation
import Testing

@testable import Courier

/// A ``RequestSigner`` signs the bytes that are sent, for every shape that sends a body: the digest header equals the
/// digest of the body the server read, and the signature covers that digest.
@Suite(.timeLimit(.minutes(1))) struct SigningAcrossShapesTests {
    private static let mac: @Sendable (Data) -> Data = { TestDigest.fnv1a(Data("key".utf8) + $0) }

    private static func signer() -> RequestSigner {
        RequestSigner(
            keyID: "key-1", bodyDigest: { TestDigest.fnv1a($0) }, mac: mac,
            now: { Date(timeIntervalSince1970: 1_700_000_000) }, nonce: { "nonce-1" })
    }

    // Every shape: uploads send their own body, the others send the payload as the request's body (a POST event
    // stream, a POST streamed or downloaded).
    @Test(arguments: CallShape.allCases)
    func theDigestIsTheDigestOfTheBytesSent(shape: CallShape) async throws {
        let transport = PipelineTransport { _, _ in .okay }
        let client = PipelineKit.client(transport) { $0.adapters = [Self.signer()] }

        let outcome = await shape.perform(ShapeCall(.post, payload: PipelineKit.payload), on: client)

        #expect(outcome.error == nil, "\(outcome.error.map { "\($0)" } ?? "")")
        let received = try #require(transport.received.first)
        #expect(transport.received.count == 1)
        #expect(!received.body.isEmpty, "a body was sent")
        let headers = received.request.headers
        #expect(headers["X-Content-Digest"] == TestDigest.hex(TestDigest.fnv1a(received.body)))
        #expect(headers["X-Content-Digest"] != TestDigest.hex(TestDigest.fnv1a(Data())), "not the empty body's")
        let canonical = RequestSigner.canonicalString(
            method: received.request.method, url: received.request.url, bodyDigest: TestDigest.fnv1a(received.body),
            timestamp: headers["X-Timestamp"] ?? "", nonce: headers["X-Nonce"] ?? "")
        #expect(headers["X-Signature"] == Self.mac(Data(canonical.utf8)).base64EncodedString())
    }
}
