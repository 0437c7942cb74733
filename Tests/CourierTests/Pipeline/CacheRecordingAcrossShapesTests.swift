import Foundation
import Testing

@testable import Courier

/// A cacheable `GET` answer is stored whichever shape fetched it, and the next call of that shape is answered from
/// the cache without going to the server.
@Suite(.timeLimit(.minutes(1))) struct CacheRecordingAcrossShapesTests {
    private static let body = Data("a cacheable body".utf8)

    // Uploads are left out (they are not `GET`s, and a successful unsafe request only invalidates), and so are event
    // streams, which ask for `no-store` and are never cached.
    @Test(arguments: CallShape.gets)
    func aCacheableResponseIsStoredAndServedNextTime(shape: CallShape) async throws {
        let transport = PipelineTransport { _, _ in
            TransportResponse(
                statusCode: 200, headers: ["Cache-Control": "max-age=60", "Content-Type": "text/plain"],
                body: Self.body)
        }
        let client = PipelineKit.client(transport, cache: ResponseCache())

        let first = await shape.perform(ShapeCall(.get), on: client)
        let second = await shape.perform(ShapeCall(.get), on: client)

        #expect(first.error == nil, "\(first.error.map { "\($0)" } ?? "")")
        #expect(first.source == .network)
        #expect(first.body == Self.body)
        #expect(second.error == nil, "\(second.error.map { "\($0)" } ?? "")")
        #expect(second.source == .cache)
        #expect(second.body == Self.body)
        #expect(transport.callCount == 1, "the second call was answered by the cache")
    }

    /// The shapes share one cache: what one stored, another is served.
    @Test(arguments: CallShape.gets)
    func whatSendStoredIsServedToEveryShape(shape: CallShape) async throws {
        let transport = PipelineTransport { _, _ in
            TransportResponse(
                statusCode: 200, headers: ["Cache-Control": "max-age=60", "Content-Type": "text/plain"],
                body: Self.body)
        }
        let client = PipelineKit.client(transport, cache: ResponseCache())

        _ = await CallShape.send.perform(ShapeCall(.get), on: client)
        let served = await shape.perform(ShapeCall(.get), on: client)

        #expect(served.source == .cache)
        #expect(served.body == Self.body)
        #expect(transport.callCount == 1)
    }
}
