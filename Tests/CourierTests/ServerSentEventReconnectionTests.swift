import Foundation
import Testing

@testable import Courier

/// How an event stream reconnects: never with a `Last-Event-ID` that is not a valid field value, never sooner than
/// ``ServerSentEvents/minimumReconnectionDelay``, backing off (with jitter) while reconnections deliver nothing, and
/// never for a request that may not be sent twice (a `POST` without an `Idempotency-Key`).
@Suite(.timeLimit(.minutes(1))) struct ServerSentEventReconnectionTests {
    /// A transport whose `connection`-th stream (from 0) gets what `respond` returns; it remembers every request.
    private final class EventTransport: HTTPTransport {
        private let respond: @Sendable (Int) -> StreamedTransportResponse
        private let recorded = Locked<[TransportRequest]>([])

        init(_ respond: @escaping @Sendable (_ connection: Int) -> StreamedTransportResponse) {
            self.respond = respond
        }

        var requests: [TransportRequest] { recorded.withLock { $0 } }

        func send(_ request: TransportRequest) async throws -> TransportResponse { TransportResponse(statusCode: 500) }

        func stream(_ request: TransportRequest) async throws -> StreamedTransportResponse {
            let index = recorded.withLock { requests in
                requests.append(request)
                return requests.count - 1
            }
            return respond(index)
        }

        static func events(_ text: String) -> StreamedTransportResponse {
            StreamedTransportResponse(
                statusCode: 200, headers: ["Content-Type": "text/event-stream"], body: ByteStream(Data(text.utf8)))
        }

        static let noContent = StreamedTransportResponse(statusCode: 204)
    }

    /// Longer than any reconnection delay: the client's own deadlines never fire while a test moves time.
    private static let timeout = Duration.seconds(100_000)
    private static func isReconnectionDelay(_ duration: Duration) -> Bool { duration < .seconds(1000) }

    private func client(_ transport: EventTransport, clock: TestClock) -> APIClient {
        APIClient(
            baseURL: URL(string: "https://api.example.com")!,
            configuration: .init(
                transport: transport, cache: nil, retryPolicy: .never, timeout: Self.timeout, clock: clock))
    }

    /// Reads every event of `events`, moving the clock over each reconnection delay.
    private func readAll(_ events: ServerSentEvents, clock: TestClock) async throws -> [ServerSentEvent] {
        let mover = Task {
            while !Task.isCancelled {
                await clock.waitForSleeper(Self.isReconnectionDelay)
                guard !Task.isCancelled else { return }
                clock.advance(by: clock.pendingSleeps.filter(Self.isReconnectionDelay).max() ?? .zero)
            }
        }
        defer { mover.cancel() }
        var read: [ServerSentEvent] = []
        for try await event in events { read.append(event) }
        return read
    }

    private func reconnectionDelays(_ clock: TestClock) -> [Duration] {
        clock.requestedSleeps.filter(Self.isReconnectionDelay)
    }

    @Test func anIDWithAControlCharacterIsKeptButNeverSent() async throws {
        let clock = TestClock()
        let transport = EventTransport { connection in
            switch connection {
            case 0: EventTransport.events("id: a\u{1}b\ndata: one\n\n")
            case 1: EventTransport.events("data: two\n\nid: 3\ndata: three\n\n")
            case 2: EventTransport.events("data: four\n\n")
            default: EventTransport.noContent
            }
        }
        let events = client(transport, clock: clock).serverSentEvents(APIRequest<Data>.get("/events"))
        let read = try await readAll(events, clock: clock)
        #expect(read.map(\.data) == ["one", "two", "three", "four"])
        #expect(read.first?.lastEventID == "a\u{1}b")
        #expect(transport.requests.map { $0.headers["Last-Event-ID"] } == [nil, nil, "3", "3"])
    }

    @Test func retryZeroIsFlooredAndEmptyReconnectionsBackOff() async throws {
        let clock = TestClock()
        let transport = EventTransport { connection in
            connection < 6 ? EventTransport.events("retry: 0\n\n") : EventTransport.noContent
        }
        let events = client(transport, clock: clock).serverSentEvents(APIRequest<Data>.get("/events"))
        #expect(try await readAll(events, clock: clock).isEmpty)
        let delays = reconnectionDelays(clock)
        let floor = ServerSentEvents.minimumReconnectionDelay
        #expect(floor >= .milliseconds(100))
        #expect(delays.count == 6)
        #expect(delays.first == floor)
        for (index, delay) in delays.enumerated().dropFirst() {
            let ceiling = floor * (1 << index)
            #expect(delay >= ceiling / 2 && delay <= ceiling, "reconnection \(index) waited \(delay)")
        }
    }

    @Test func backoffIsCappedAndResetByAnEvent() async throws {
        let clock = TestClock()
        let transport = EventTransport { connection in
            switch connection {
            case 0..<12: EventTransport.events(": nothing\n")
            case 12: EventTransport.events("data: at last\n\n")
            default: EventTransport.noContent
            }
        }
        let events = client(transport, clock: clock).serverSentEvents(
            APIRequest<Data>.get("/events"), reconnectionDelay: .seconds(1))
        #expect(try await readAll(events, clock: clock).map(\.data) == ["at last"])
        let delays = reconnectionDelays(clock)
        #expect(delays.count == 13)
        #expect(delays.allSatisfy { $0 <= ServerSentEvents.maximumReconnectionDelay })
        #expect(delays.dropLast().last ?? .zero >= ServerSentEvents.maximumReconnectionDelay / 2)
        #expect(delays.last == .seconds(1))
    }

    @Test func aPOSTStreamIsNotReconnected() async throws {
        let clock = TestClock()
        let transport = EventTransport { connection in
            connection == 0 ? EventTransport.events("data: one\n\n") : EventTransport.noContent
        }
        let events = client(transport, clock: clock).serverSentEvents(
            APIRequest<Data>.post("/chat", body: Data("{}".utf8)), reconnectionDelay: .zero)
        #expect(try await readAll(events, clock: clock).map(\.data) == ["one"])
        #expect(transport.requests.count == 1)
    }

    @Test func aPOSTStreamWithAnIdempotencyKeyReconnects() async throws {
        let clock = TestClock()
        let transport = EventTransport { connection in
            connection == 0 ? EventTransport.events("data: one\n\n") : EventTransport.noContent
        }
        var request = APIRequest<Data>.post("/chat", body: Data("{}".utf8))
        request.headers["Idempotency-Key"] = "k-1"
        let events = client(transport, clock: clock).serverSentEvents(request)
        #expect(try await readAll(events, clock: clock).map(\.data) == ["one"])
        #expect(transport.requests.count == 2)
    }
}
