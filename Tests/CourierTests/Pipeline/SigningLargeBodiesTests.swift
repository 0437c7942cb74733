import Foundation
import Testing

@testable import Courier

/// The signer's two ways to digest a body read as it is sent: piece by piece (never holding it), or whole up to
/// ``RequestSigner/maximumHeldBodyBytes``, past which the call fails before anything is sent.
@Suite(.timeLimit(.minutes(1))) struct SigningLargeBodiesTests {
    /// FNV-1a fed piece by piece: equal to ``TestDigest/fnv1a(_:)`` of the whole, and counts the pieces.
    private struct PiecewiseFNV: IncrementalBodyDigest {
        var bytes = Data()
        let pieces: Locked<Int>
        mutating func update(_ piece: Data) {
            bytes.append(piece)
            pieces.withLock { $0 += 1 }
        }
        mutating func finalize() -> Data { TestDigest.fnv1a(bytes) }
    }

    @Test func anIncrementalDigestIsFedTheUploadChunkByChunk() async throws {
        let pieces = Locked(0)
        let signer = RequestSigner(
            incrementalDigest: { PiecewiseFNV(pieces: pieces) }, mac: { $0 }, now: { Date(timeIntervalSince1970: 0) },
            nonce: { "n" })
        let transport = PipelineTransport { _, _ in .okay }
        let client = PipelineKit.client(transport) { $0.adapters = [signer] }
        let chunks = (0..<5).map { Data(repeating: UInt8($0), count: 1_000) }
        let body = StreamedBody(length: 5_000) {
            let next = Locked(0)
            return ByteStream(next: {
                next.withLock { index in
                    defer { index += 1 }
                    return index < chunks.count ? chunks[index] : nil
                }
            })
        }

        _ = try await client.upload(APIRequest<Void>.post("/files"), body: body).value

        let received = try #require(transport.received.first)
        #expect(received.body == chunks.reduce(Data(), +))
        #expect(received.request.headers["X-Content-Digest"] == TestDigest.hex(TestDigest.fnv1a(received.body)))
        #expect(pieces.withLock { $0 } == 5, "fed one chunk at a time")
    }

    @Test func aBodyTooLargeToHoldFailsBeforeAnythingIsSent() async throws {
        let signer = RequestSigner(bodyDigest: { TestDigest.fnv1a($0) }, mac: { $0 })
        let transport = PipelineTransport { _, _ in .okay }
        let client = PipelineKit.client(transport) { $0.adapters = [signer] }
        let size = RequestSigner.maximumHeldBodyBytes + 1
        let body = StreamedBody(length: size) { ByteStream(Data(count: size)) }

        await #expect {
            _ = try await client.upload(APIRequest<Void>.post("/files"), body: body).value
        } throws: { error in
            guard case APIError.adapterFailed(let underlying as RequestSigningError) = error else { return false }
            return underlying.step == .bodyDigest && "\(underlying)".contains("incremental digest")
        }
        #expect(transport.received.isEmpty)
    }
}
