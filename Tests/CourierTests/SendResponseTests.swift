import Foundation
import Testing

@testable import Courier

/// `send` builds the caller's response in a plain function of its own on each of its ways (a fresh hit answered by
/// `start`, a call that leads a flight, a call that joins one), for both overloads: a value that is `Sendable`
/// (decoded once for the flight) and one that is not (decoded by each caller). Each way gives the caller its own
/// value and head, and a body that does not decode ends each call with `decodingFailed`.
@Suite(.timeLimit(.minutes(1))) struct SendResponseTests {
    private static let baseURL = URL(string: "https://api.example.com")!

    struct Item: Decodable, Sendable, Equatable {
        let name: String
    }

    /// Not `Sendable`: `send` takes its other overload, which decodes in each caller.
    final class Note: Decodable {
        let name: String
    }

    /// A client whose transport holds every request until `gate` opens, then answers `body` (fresh for an hour).
    private static func client(_ gate: CoalescerTestKit.Gate, body: String) -> (APIClient, MockTransport) {
        let transport = MockTransport { _, _ in
            _ = await gate.wait()
            return .json(body, headers: ["Cache-Control": "max-age=3600"])
        }
        let client = APIClient(
            baseURL: baseURL,
            configuration: .init(transport: transport, cache: ResponseCache(), retryPolicy: .never))
        return (client, transport)
    }

    private static func isDecodingFailure(_ error: any Error) -> Bool {
        if case .decodingFailed? = error as? APIError { true } else { false }
    }

    @Test func aLeaderAJoinerAndAHitEachGetTheirOwnResponse() async throws {
        let gate = CoalescerTestKit.Gate()
        let (client, transport) = Self.client(gate, body: #"{"name":"first"}"#)
        let leader = Task { try await client.send(APIRequest<Item>.get("/item")) }
        try await CoalescerTestKit.waitForWaiters(1, on: client.coalescer)
        let joiner = Task { try await client.send(APIRequest<Item>.get("/item")) }
        // A value that is not `Sendable` stays in the task that decoded it.
        let noteJoiner = Task {
            let response = try await client.send(APIRequest<Note>.get("/item"))
            return (response.value.name, response.joined, response.callID)
        }
        try await CoalescerTestKit.waitForWaiters(3, on: client.coalescer)
        await gate.open()

        let led = try await leader.value
        let joined = try await joiner.value
        let (noteName, noteJoined, noteCallID) = try await noteJoiner.value
        #expect(led.value == Item(name: "first") && !led.joined)
        #expect(joined.value == Item(name: "first") && joined.joined)
        #expect(noteName == "first" && noteJoined)
        #expect(Set([led.callID, joined.callID, noteCallID]).count == 3, "each caller's head is its own")

        // Fresh hits, answered by `start` without a suspension point.
        let hit = try await client.send(APIRequest<Item>.get("/item"))
        let noteHit = try await client.send(APIRequest<Note>.get("/item"))
        #expect(hit.value == Item(name: "first") && hit.source == .cache)
        #expect(noteHit.value.name == "first" && noteHit.source == .cache)
        #expect(transport.callCount == 1)
    }

    @Test func aBodyThatDoesNotDecodeFailsEveryWay() async throws {
        let gate = CoalescerTestKit.Gate()
        let (client, transport) = Self.client(gate, body: #"{"title":"no name"}"#)
        let leader = Task { try await client.send(APIRequest<Item>.get("/item")) }
        try await CoalescerTestKit.waitForWaiters(1, on: client.coalescer)
        let joiner = Task { try await client.send(APIRequest<Item>.get("/item")) }
        let noteJoiner = Task { _ = try await client.send(APIRequest<Note>.get("/item")) }
        try await CoalescerTestKit.waitForWaiters(3, on: client.coalescer)
        await gate.open()

        for outcome in [await leader.result.map { _ in () }, await joiner.result.map { _ in () }] {
            #expect(throws: APIError.self) { try outcome.get() }
            if case .failure(let error) = outcome { #expect(Self.isDecodingFailure(error)) }
        }
        let noteOutcome = await noteJoiner.result
        if case .failure(let error) = noteOutcome {
            #expect(Self.isDecodingFailure(error))
        } else {
            Issue.record("a joiner whose body does not decode got a value")
        }

        // The response was stored: a fresh hit that does not decode fails the same way, on both overloads.
        let hit = await #expect(throws: APIError.self) { try await client.send(APIRequest<Item>.get("/item")) }
        #expect(hit.map(Self.isDecodingFailure) == true)
        let noteHit = await #expect(throws: APIError.self) { try await client.send(APIRequest<Note>.get("/item")) }
        #expect(noteHit.map(Self.isDecodingFailure) == true)
        #expect(transport.callCount == 1)
    }
}
