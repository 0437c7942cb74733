import Foundation
import Testing

@testable import Courier

/// An event stream reconnects when its connection ends, but only when its request may be sent twice: a `POST`
/// event stream is sent once, a `GET` one (or a `POST` with an `Idempotency-Key`) reconnects.
@Suite(.timeLimit(.minutes(1))) struct EventStreamResendTests {
    /// Three connections deliver one event each; the fourth is told `204 No Content`, which ends the stream.
    private static func server() -> PipelineTransport {
        PipelineTransport { _, index in index < 3 ? .okay : TransportResponse(statusCode: 204) }
    }

    /// Reads the whole stream, moving the clock over each reconnection delay (3 s, the default).
    private static func readAll(_ call: ShapeCall, on client: APIClient, clock: TestClock) async -> CallOutcome? {
        var call = call
        call.maxReconnects = nil
        return await PipelineKit.run(moving: clock, by: .seconds(3), maxSteps: 6) { [call] in
            await CallShape.serverSentEvents.perform(call, on: client)
        }
    }

    @Test func aPOSTEventStreamIsSentOnce() async throws {
        let clock = TestClock()
        let transport = Self.server()
        let client = PipelineKit.client(transport, clock: clock)

        let outcome = try #require(await Self.readAll(ShapeCall(.post), on: client, clock: clock))

        #expect(outcome.error == nil, "\(outcome.error.map { "\($0)" } ?? "")")
        #expect(transport.callCount == 1, "never reconnected")
        #expect(String(decoding: outcome.body, as: UTF8.self) == "ok")
    }

    @Test func aGETEventStreamReconnects() async throws {
        let clock = TestClock()
        let transport = Self.server()
        let client = PipelineKit.client(transport, clock: clock)

        let outcome = try #require(await Self.readAll(ShapeCall(.get), on: client, clock: clock))

        #expect(outcome.error == nil, "\(outcome.error.map { "\($0)" } ?? "")")
        #expect(transport.callCount == 4, "three streams and the 204 that ended them")
        #expect(String(decoding: outcome.body, as: UTF8.self) == "ok\nok\nok")
    }

    @Test func aPOSTEventStreamWithAnIdempotencyKeyReconnects() async throws {
        let clock = TestClock()
        let transport = Self.server()
        let client = PipelineKit.client(transport, clock: clock)
        var call = ShapeCall(.post)
        call.headers["Idempotency-Key"] = "feed-1"

        let outcome = try #require(await Self.readAll(call, on: client, clock: clock))

        #expect(outcome.error == nil, "\(outcome.error.map { "\($0)" } ?? "")")
        #expect(transport.callCount == 4)
    }
}
