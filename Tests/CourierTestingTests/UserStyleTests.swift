// Tests written as a user of Courier writes them: only `import Courier` and `import CourierTesting`, no @testable,
// so they show that the testing product is enough to test code that uses a client.
import Courier
import CourierTesting
import Foundation
import Testing

/// A user's own code: a small service that reads users through a client it is given.
private struct UserDirectory {
    struct User: Decodable, Equatable { let id: Int; let name: String }

    let client: APIClient

    func name(of id: Int) async throws -> String {
        try await client.send(APIRequest<User>.get("/users/\(id)")).value.name
    }
}

@Suite struct UserStyleTests {
    @Test func aStubAnswersAndRemembersWhatWasSent() async throws {
        let transport = StubTransport { request in
            .json(#"{"id": 42, "name": "Ada"}"#)
        }
        let client = APIClient(baseURL: URL(string: "https://api.test")!, configuration: .init(transport: transport))

        let name = try await UserDirectory(client: client).name(of: 42)

        #expect(name == "Ada")
        #expect(transport.requests.map(\.url.absoluteString) == ["https://api.test/users/42"])
        #expect(transport.requests.first?.headers["Content-Type"] == nil)
    }

    @Test func aScriptedSequenceDrivesRetriesOnTheManualClock() async throws {
        let clock = ManualClock()
        let transport = StubTransport.sequence([
            .success(.text(503, headers: ["Retry-After": "2"])),
            .success(.json(#"{"id": 7, "name": "Grace"}"#)),
        ])
        let configuration = APIClient.Configuration(transport: transport, cache: nil, clock: clock)
        let client = APIClient(baseURL: URL(string: "https://api.test")!, configuration: configuration)

        let call = Task { try await UserDirectory(client: client).name(of: 7) }
        await clock.waitForSleeper(of: .seconds(2))  // the client honours Retry-After
        #expect(transport.callCount == 1)
        clock.advance(by: .seconds(2))

        #expect(try await call.value == "Grace")
        #expect(transport.callCount == 2)
        #expect(clock.requestedSleeps.contains(.seconds(2)))
    }

    @Test func aDeadlinePassesOnlyWhenTheTestMovesTime() async throws {
        let clock = ManualClock()
        let (never, _) = AsyncStream<Void>.makeStream()
        let transport = StubTransport { _ in
            for await _ in never {}  // a server that never answers, until the call is cancelled
            throw CancellationError()
        }
        let configuration = APIClient.Configuration(
            transport: transport, cache: nil, retryPolicy: .never, timeout: .seconds(30), clock: clock)
        let client = APIClient(baseURL: URL(string: "https://api.test")!, configuration: configuration)

        let call = Task { try await client.send(APIRequest<Data>.get("/slow")) }
        await clock.waitForSleeper(of: .seconds(30))
        clock.advance(by: .seconds(30))

        await #expect {
            _ = try await call.value
        } throws: { error in
            if case .timedOut = error as? APIError { return true }
            return false
        }
    }

    @Test func errorsCarryTheResponseTheStubSent() async throws {
        let transport = StubTransport.responding(status: 404, body: "no such user")
        let client = APIClient(baseURL: URL(string: "https://api.test")!, configuration: .init(transport: transport))

        await #expect {
            _ = try await UserDirectory(client: client).name(of: 0)
        } throws: { error in
            guard case .unacceptableStatus(let response) = error as? APIError else { return false }
            return response.statusCode == 404 && String(decoding: response.body, as: UTF8.self) == "no such user"
        }
    }

    @Test func encodedResponsesRoundTrip() async throws {
        struct Point: Codable, Equatable { let x: Int; let y: Int }
        let response = try TransportResponse.json(encoding: Point(x: 1, y: 2), status: 201)
        let client = APIClient(
            baseURL: URL(string: "https://api.test")!, configuration: .init(transport: StubTransport.always(response)))

        let answer = try await client.send(APIRequest<Point>.post("/points", body: Point(x: 1, y: 2)))

        #expect(answer.value == Point(x: 1, y: 2) && answer.statusCode == 201)
        #expect(response.headers["Content-Type"] == "application/json")
    }
}
