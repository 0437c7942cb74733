import Foundation
import Testing

@testable import Courier

private typealias Kit = EventTestKit

/// What an observer saw: each event with the caller's task-local value at the moment it was recorded.
private final class RecordingObserver: CallObserver {
    /// Set by a test around its calls; an observer called in the caller's task sees it.
    @TaskLocal static var caller: String?

    struct Seen: Sendable {
        let event: ClientEvent
        let caller: String?
    }

    private let seen = Locked<[Seen]>([])
    /// The field added to each attempt, from the call id and attempt number, or none.
    private let field: (@Sendable (CallID, Int) -> (String, String))?

    init(adding field: (@Sendable (CallID, Int) -> (String, String))? = nil) {
        self.field = field
    }

    var events: [Seen] { seen.withLock { $0 } }

    func record(_ event: ClientEvent, in log: EventLog) {
        seen.withLock { $0.append(Seen(event: event, caller: Self.caller)) }
    }

    func prepareAttempt(_ attempt: Int, of callID: CallID, in log: EventLog, headers: inout HeaderFields) {
        guard let (name, value) = field?(callID, attempt) else { return }
        headers[name] = value
    }
}

/// Only adds a field: the default `record` does nothing.
private struct TraceContextAdder: CallObserver {
    func prepareAttempt(_ attempt: Int, of callID: CallID, in log: EventLog, headers: inout HeaderFields) {
        headers["traceparent"] = "00-\(callID.rawValue)-\(attempt)-01"
    }
}

/// Observers are called synchronously, in the task where each step happens, with the events subscribers get; what
/// they add to an attempt reaches the transport and nothing else.
@Suite(.timeLimit(.minutes(1))) struct CallObserverTests {
    @Test func theObserverSeesEveryStepInOrderInTheCallingTask() async throws {
        let observer = RecordingObserver()
        let transport = MockTransport.sequence([.success(.text(503)), .success(.text(200, "ok"))])
        let clock = TestClock()
        let client = Kit.makeClient(transport, retryPolicy: RetryPolicy(maxAttempts: 2, jitter: .none), clock: clock) {
            $0.observers = [observer]
        }
        let events = client.events
        let call = Task {
            try await RecordingObserver.$caller.withValue("route /users") {
                try await client.send(APIRequest<Data>.get("/users"))
            }
        }
        await clock.waitForSleeper(of: .milliseconds(500))
        clock.advance(by: .milliseconds(500))
        _ = try await call.value

        let seen = observer.events
        #expect(
            seen.map(\.event.kind).map(Self.name) == [
                "requestStarted", "attemptSent", "responseReceived", "retryScheduled", "attemptSent",
                "responseReceived", "requestFinished",
            ])
        #expect(seen.allSatisfy { $0.caller == "route /users" }, "every step ran under the caller's task-local")
        #expect(seen.first?.event.kind == Kit.started("/users"))
        #expect(seen.allSatisfy { $0.event.callID == CallID(rawValue: 1) })
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.event.at <= $1.event.at })
        // The same steps a subscriber gets, in the same order.
        let streamed = await Kit.collect(events, from: client.eventLog)
        #expect(streamed.map(\.kind) == seen.map(\.event.kind))
    }

    @Test func observersGetEventsWithNobodySubscribed() async throws {
        let observer = RecordingObserver()
        let client = Kit.makeClient(.responding(status: 200)) { $0.observers = [observer] }
        #expect(!client.eventLog.hasSubscribers)
        _ = try await client.send(APIRequest<Data>.get("/a"))
        #expect(observer.events.count == 4)
        #expect(observer.events.last.map { Self.name($0.event.kind) } == "requestFinished")
    }

    @Test func addedFieldsReachTheTransportOnEveryAttempt() async throws {
        let transport = MockTransport.sequence([.success(.text(503)), .success(.text(200))])
        let clock = TestClock()
        let client = Kit.makeClient(transport, retryPolicy: RetryPolicy(maxAttempts: 2, jitter: .none), clock: clock) {
            $0.observers = [TraceContextAdder(), RecordingObserver(adding: { _, _ in ("X-Second", "seen") })]
        }
        let call = Task { try await client.send(APIRequest<Data>.get("/a")) }
        await clock.waitForSleeper(of: .milliseconds(500))
        clock.advance(by: .milliseconds(500))
        _ = try await call.value
        #expect(transport.requests.map { $0.headers["traceparent"] } == ["00-1-1-01", "00-1-2-01"])
        #expect(transport.requests.allSatisfy { $0.headers["X-Second"] == "seen" })
    }

    @Test func aFieldTheRequestHasIsKept() async throws {
        let transport = MockTransport.responding(status: 200)
        let client = Kit.makeClient(transport) { $0.observers = [TraceContextAdder()] }
        _ = try await client.send(APIRequest<Data>.get("/a", headers: ["traceparent": "00-mine-01"]))
        #expect(transport.requests.first?.headers.values(for: "traceparent") == ["00-mine-01"])
    }

    @Test func aFieldThatCouldSplitTheRequestIsRefusedBeforeAnythingIsSent() async throws {
        let transport = MockTransport.responding(status: 200)
        let client = Kit.makeClient(transport) {
            $0.observers = [RecordingObserver(adding: { _, _ in ("traceparent", "00-a\r\nX-Injected: 1") })]
        }
        let error = try await #require(throws: APIError.self) { try await client.send(APIRequest<Data>.get("/a")) }
        guard case .invalidRequest(.invalidHeaderValue(name: "traceparent")) = error else {
            Issue.record("expected an invalid header value, got \(error)")
            return
        }
        #expect(transport.callCount == 0)
    }

    /// Every caller would add a different field: had it entered the key or the stored request, the flight would split
    /// and the cache would miss. Even a key and a response that vary on that very name do not see it.
    @Test func fieldsAddedPerCallNeitherSplitAFlightNorTheCache() async throws {
        let gate = CoalescerTestKit.Gate()
        let transport = MockTransport { _, _ in
            _ = await gate.wait()
            return .text(200, "shared", headers: ["Cache-Control": "max-age=60", "Vary": "traceparent"])
        }
        let client = Kit.makeClient(transport, cache: ResponseCache()) {
            $0.observers = [TraceContextAdder()]
            $0.coalescingHeaders = ["traceparent"]
        }
        let calls = (0..<50).map { _ in Task { try await client.send(APIRequest<Data>.get("/shared")) } }
        try await CoalescerTestKit.waitForWaiters(50, on: client.coalescer)
        await gate.open()
        var responses: [APIResponse<Data>] = []
        for call in calls { responses.append(try await call.value) }
        #expect(transport.callCount == 1)
        #expect(responses.filter(\.joined).count == 49)
        let sent = try #require(transport.requests.first?.headers["traceparent"])
        #expect(sent.hasPrefix("00-") && sent.hasSuffix("-1-01"))
        let cached = try await client.send(APIRequest<Data>.get("/shared"))
        #expect(cached.source == .cache)
        #expect(transport.callCount == 1)
    }

    @Test func noSecretReachesTheObserver() async throws {
        let observer = RecordingObserver()
        let transport = MockTransport { request, _ in
            if request.url.path == "/down" { throw URLError(.cannotConnectToHost, userInfo: ["url": request.url]) }
            return .text(200, "", headers: ["Set-Cookie": "session=secret-session"])
        }
        let issuer = AuthTestKit.Issuer(date: AuthTestKit.ManualDate())
        let client = Kit.makeClient(
            transport, authenticator: AuthTestKit.refresher(AuthTestKit.credential(), issuer: issuer)
        ) { configuration in
            configuration.observers = [observer]
            configuration.headers = ["Cookie": "session=secret-cookie", "X-Api-Key": "secret-header"]
            configuration.credentials.headerNames.insert("X-Api-Key")
        }
        let query = [URLQueryItem(name: "api_key", value: "secret-query")]
        _ = try await client.send(APIRequest<Data>.get("/users", query: query))
        await #expect(throws: APIError.self) { try await client.send(APIRequest<Data>.get("/down", query: query)) }
        _ = try? await client.send(APIRequest<Data>.get("https://bob:secret-password@api.example.com/x"))

        let seen = observer.events.map(\.event)
        #expect(seen.contains { if case .attemptSent = $0.kind { true } else { false } })
        #expect(seen.contains { if case .requestFailed = $0.kind { true } else { false } })
        for event in seen {
            let text = AuthTestKit.printed(event)
            #expect(!text.contains("secret") && !text.contains(AuthTestKit.credential().accessToken), "\(text)")
        }
    }

    /// The case name of a step with associated values, so that an expected sequence reads as a list of steps.
    private static func name(_ kind: ClientEvent.Kind) -> String {
        Mirror(reflecting: kind).children.first?.label ?? "\(kind)"
    }
}
