import CourierTesting
import Foundation
import Testing

@testable import Courier

@Suite struct CallTimingsTests {
    @Test func theResponseNamesItsCallSoTheCallerFindsItsEvents() async throws {
        let client = APIClient(
            baseURL: URL(string: "https://api.test")!, configuration: .init(transport: StubTransport.json("{}")))
        let events = client.events

        _ = try await client.send(APIRequest<Data>.get("/warm-up"))
        let response = try await client.send(APIRequest<Data>.get("/mine"))

        var mine: [String] = []
        for await event in events {
            if event.callID == response.callID { mine.append("\(event.kind)") }
            if case .requestFinished = event.kind, event.callID == response.callID { break }
        }
        #expect(response.callID == CallID(rawValue: 2))
        #expect(mine.first == "started GET https://api.test/mine")
    }

    @Test func everyAttemptAndDelayIsTimedOnTheClientsClock() async throws {
        let clock = ManualClock()
        let transport = StubTransport { _, index in
            clock.advance(by: index == 0 ? .milliseconds(30) : .milliseconds(20))  // the server takes its time
            return index == 0 ? .text(503, headers: ["Retry-After": "2"]) : .text(201, "done!")
        }
        let client = APIClient(
            baseURL: URL(string: "https://api.test")!,
            configuration: .init(transport: transport, cache: nil, clock: clock))
        var request = APIRequest<Data>.post("/orders", body: Data("sku=1".utf8))
        request.headers["Idempotency-Key"] = "k-1"

        let call = Task { try await client.send(request) }
        await clock.waitForSleeper(of: .seconds(2))
        clock.advance(by: .seconds(2))
        let timings = try await call.value.timings

        let expected: [CallTimings.Attempt] = [
            CallTimings.Attempt(number: 1, duration: .milliseconds(30), status: 503, bytesSent: 5, bytesReceived: 0),
            CallTimings.Attempt(number: 2, duration: .milliseconds(20), status: 201, bytesSent: 5, bytesReceived: 5),
        ]
        #expect(timings.attempts == expected)
        let delays: [Duration] = [.seconds(2)]
        #expect(timings.retryDelays == delays)
        #expect(timings.total == .milliseconds(2_050))
        #expect(timings.bytesSent == 10 && timings.bytesReceived == 5)
        #expect(timings.sharedFlightLeader == nil && timings.sharedFlightWait == nil)
    }

    @Test func aJoinerNamesTheLeaderAndHowLongItWaited() async throws {
        let clock = ManualClock()
        let (gate, open) = AsyncStream<Void>.makeStream()
        let transport = StubTransport { _ in
            for await _ in gate {}
            return .json("{}")
        }
        let client = APIClient(
            baseURL: URL(string: "https://api.test")!,
            configuration: .init(transport: transport, cache: nil, clock: clock))

        let leader = Task { try await client.send(APIRequest<Data>.get("/feed")) }
        while transport.callCount == 0 { await Task.yield() }
        clock.advance(by: .milliseconds(5))
        let joiner = Task { try await client.send(APIRequest<Data>.get("/feed")) }
        while await client.coalescer.waiterCount < 2 { await Task.yield() }
        clock.advance(by: .milliseconds(40))
        open.finish()
        let (led, joined) = try await (leader.value, joiner.value)

        #expect(joined.joined && !led.joined)
        #expect(joined.timings.sharedFlightLeader == led.callID)
        #expect(joined.timings.sharedFlightWait == .milliseconds(40))
        #expect(joined.timings.attempts == led.timings.attempts)
        #expect(led.timings.attempts.map(\.duration) == [.milliseconds(45)])
    }

    @Test func anAnswerFromTheCacheHasNoAttempts() async throws {
        let client = APIClient(
            baseURL: URL(string: "https://api.test")!,
            configuration: .init(transport: StubTransport.always(.json("{}", headers: ["Cache-Control": "max-age=60"])))
        )

        let first = try await client.send(APIRequest<Data>.get("/fresh"))
        let second = try await client.send(APIRequest<Data>.get("/fresh"))

        #expect(first.timings.attempts.count == 1)
        #expect(second.source == .cache && second.timings.attempts.isEmpty && second.callID != first.callID)
        #expect(second.map { $0.count }.timings == second.timings)
    }
}
