import Foundation
import Testing

@testable import Courier

/// `APIRequest.throwsOnUnacceptableStatus = false`: the final status reaches the caller as a response, after the
/// retries and the refresh ran as usual. What an OpenAPI-generated client needs to see its documented `404`s.
@Suite(.timeLimit(.minutes(1))) struct StatusPassThroughTests {
    private static let origin = URL(string: "https://api.example.com")!

    private func makeClient(_ transport: MockTransport, clock: TestClock = TestClock()) -> APIClient {
        APIClient(
            baseURL: Self.origin,
            configuration: .init(transport: transport, retryPolicy: RetryPolicy(jitter: .none), clock: clock))
    }

    private func passingThrough(_ request: APIRequest<Data>) -> APIRequest<Data> {
        var request = request
        request.throwsOnUnacceptableStatus = false
        return request
    }

    @Test func aNotFoundIsReturnedWithItsBodyAndHeaders() async throws {
        let transport = MockTransport.responding(
            status: 404, headers: ["Content-Type": "application/problem+json"], body: #"{"title":"no such user"}"#)
        let client = makeClient(transport)
        let response = try await client.send(passingThrough(.get("/users/0")))
        #expect(response.statusCode == 404)
        #expect(response.value == Data(#"{"title":"no such user"}"#.utf8))
        #expect(response.headers["content-type"] == "application/problem+json")
        #expect(response.attempts == 1)
    }

    @Test func theDefaultStillThrowsUnacceptableStatus() async throws {
        let client = makeClient(MockTransport.responding(status: 404))
        let error = try await #require(throws: APIError.self) { try await client.send(APIRequest<Data>.get("/u")) }
        guard case .unacceptableStatus(let response) = error else {
            Issue.record("expected unacceptableStatus, got \(error)")
            return
        }
        #expect(response.statusCode == 404)
    }

    @Test func aServerErrorIsStillRetriedAndTheLastOneReturned() async throws {
        let clock = TestClock()
        let transport = MockTransport.responding(status: 503, body: "busy")
        let client = makeClient(transport, clock: clock)
        let call = Task { try await client.send(passingThrough(.get("/busy"))) }
        for delay in [Duration.milliseconds(500), .seconds(1)] {
            await clock.waitForSleeper(of: delay)
            clock.advance(by: delay)
        }
        let response = try await call.value
        #expect(response.statusCode == 503)
        #expect(response.attempts == 3)
        #expect(transport.callCount == 3)
    }

    @Test func aReturnedStatusCountsAsFinishedNotFailed() async throws {
        let client = makeClient(MockTransport.responding(status: 409))
        let events = client.events
        _ = try await client.send(passingThrough(.post("/orders", body: Data("{}".utf8))))
        var finishedStatus: Int?
        for await event in events {
            if case .requestFinished(_, let status, _) = event.kind {
                finishedStatus = status
                break
            }
            if case .requestFailed = event.kind { break }
        }
        #expect(finishedStatus == 409)
        #expect(client.metrics.failures == 0)
    }

    @Test func joinersOfOneFlightEachApplyTheirOwnChoice() async throws {
        let gate = CoalescerTestKit.Gate()
        let transport = MockTransport { _, _ in
            _ = await gate.wait()
            return .text(404, "gone")
        }
        let client = makeClient(transport)
        let passing = Task { try await client.send(passingThrough(.get("/shared"))) }
        let throwing = Task { try await client.send(APIRequest<Data>.get("/shared")) }
        try await CoalescerTestKit.waitForWaiters(2, on: client.coalescer)
        await gate.open()
        #expect(try await passing.value.statusCode == 404)
        let error = await #expect(throws: APIError.self) { try await throwing.value }
        #expect(error?.statusCode == 404)
        #expect(transport.callCount == 1)
    }

    @Test func aRemainingUnauthorizedStillThrowsWithItsResponse() async throws {
        let transport = MockTransport.responding(status: 401, body: "who are you")
        let client = makeClient(transport)
        let error = try await #require(throws: APIError.self) { try await client.send(passingThrough(.get("/me"))) }
        guard case .unauthorized(let response) = error else {
            Issue.record("expected unauthorized, got \(error)")
            return
        }
        #expect(response.body == Data("who are you".utf8))
    }
}
