import Foundation
import Testing

@testable import Courier

/// The streaming side of the transport seam: byte streams, streamed request bodies, and the buffered default.
@Suite struct StreamingSeamTests {
    private static func chunks(_ parts: [String]) -> ByteStream {
        let remaining = Locked(parts.map { Data($0.utf8) })
        return ByteStream(next: { remaining.withLock { $0.isEmpty ? nil : $0.removeFirst() } })
    }

    @Test func aStreamYieldsItsChunksInOrderAndSkipsEmptyOnes() async throws {
        var seen: [String] = []
        for try await chunk in Self.chunks(["ab", "", "cd", "e"]) {
            seen.append(String(decoding: chunk, as: UTF8.self))
        }
        #expect(seen == ["ab", "cd", "e"])
    }

    @Test func collectingPastTheLimitFailsWithResponseTooLarge() async throws {
        #expect(try await Self.chunks(["abc", "de"]).collect(upTo: 5) == Data("abcde".utf8))
        await #expect(throws: APIError.self) { try await Self.chunks(["abc", "def"]).collect(upTo: 5) }
        do {
            _ = try await Self.chunks(["abc", "def"]).collect(upTo: 5)
        } catch let APIError.responseTooLarge(limit) {
            #expect(limit == 5)
        }
    }

    @Test func aStreamOverAnAsyncSequenceReadsItOnce() async throws {
        let (sequence, continuation) = AsyncStream<Data>.makeStream()
        continuation.yield(Data("one".utf8))
        continuation.yield(Data("two".utf8))
        continuation.finish()
        #expect(try await ByteStream(sequence).collect(upTo: 100) == Data("onetwo".utf8))
    }

    @Test func aOneShotBodyRefusesASecondAttempt() async throws {
        let body = StreamedBody(length: 5, chunks: ByteStream(Data("hello".utf8)))
        #expect(!body.isReplayable)
        #expect(try await body.collect() == Data("hello".utf8))
        #expect(throws: APIError.self) { try body.makeChunks() }
        do {
            _ = try body.makeChunks()
        } catch let APIError.invalidRequest(reason) {
            #expect(reason == .bodyNotReplayable)
        }
    }

    @Test func aReplayableBodyProducesItsBytesForEveryAttempt() async throws {
        let made = Locked(0)
        let body = StreamedBody(length: nil) {
            made.withLock { $0 += 1 }
            return ByteStream(Data("again".utf8))
        }
        #expect(try await body.collect() == Data("again".utf8))
        #expect(try await body.collect() == Data("again".utf8))
        #expect(made.withLock { $0 } == 2)
    }

    @Test func theDefaultStreamSendsAStreamedBodyBufferedAndReturnsTheBodyAsOneChunk() async throws {
        let transport = MockTransport { request, _ in
            TransportResponse(statusCode: 201, headers: ["X-Echo": "yes"], body: request.body ?? Data())
        }
        var request = TransportRequest(method: .post, url: URL(string: "https://api.example.com/upload")!)
        request.streamedBody = StreamedBody(length: nil, chunks: Self.chunks(["up", "load"]))
        let response = try await transport.stream(request)
        #expect(response.statusCode == 201)
        #expect(response.headers["X-Echo"] == "yes")
        var chunks: [Data] = []
        for try await chunk in response.body { chunks.append(chunk) }
        #expect(chunks == [Data("upload".utf8)])
        #expect(transport.requests.first?.streamedBody == nil)
        #expect(transport.requests.first?.body == Data("upload".utf8))
    }
}
