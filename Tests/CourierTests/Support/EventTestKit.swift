import Foundation
import Testing

@testable import Courier

/// Tools for the event tests: collect what a subscriber received so far without waiting on a clock, and build
/// clients whose every dependency the test controls.
enum EventTestKit {
    static let baseURL = URL(string: "https://api.example.com")!

    /// The id of the marker event ``collect(_:from:)`` emits; clients number their calls from 1.
    static let marker = CallID(rawValue: 0)

    /// Every event `stream` received before this call: emits a marker into `log` and reads up to it. Events are
    /// emitted synchronously by the calls, so everything a finished call emitted is already buffered.
    static func collect(_ stream: AsyncStream<ClientEvent>, from log: EventLog) async -> [ClientEvent] {
        log.emit(marker, .cacheMiss)
        var events: [ClientEvent] = []
        for await event in stream {
            if event.callID == marker { break }
            events.append(event)
        }
        return events
    }

    /// The kinds of the events of call `id`, in order.
    static func kinds(_ events: [ClientEvent], of id: UInt64) -> [ClientEvent.Kind] {
        events.filter { $0.callID == CallID(rawValue: id) }.map(\.kind)
    }

    /// A client over `transport` with a manual clock and date, no retries unless told, and no cache unless given.
    static func makeClient(
        _ transport: MockTransport, cache: ResponseCache? = nil, retryPolicy: RetryPolicy = .never,
        clock: TestClock = TestClock(), date: TestDate = TestDate(), authenticator: TokenRefresher? = nil,
        configure: (inout APIClient.Configuration) -> Void = { _ in }
    ) -> APIClient {
        var configuration = APIClient.Configuration(
            transport: transport, cache: cache, retryPolicy: retryPolicy, authenticator: authenticator, clock: clock,
            currentDate: { date.now })
        configure(&configuration)
        return APIClient(baseURL: baseURL, configuration: configuration)
    }

    /// `GET /path` as the events show it.
    static func started(_ path: String, _ method: RequestMethod = .get) -> ClientEvent.Kind {
        .requestStarted(method: method, url: "https://api.example.com" + path)
    }
}
