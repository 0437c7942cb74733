#if Observability
    import Courier
    import Foundation
    import InMemoryLogging
    import Logging
    import Synchronization

    /// What the observability tests share: a transport from a closure, a gate, a logger that keeps its lines, and a
    /// client with no cache and no retries unless told.
    enum TestKit {
        static let baseURL = URL(string: "https://api.example.com/v1")!

        /// A transport whose answers come from a closure, recording every request.
        final class StubTransport: HTTPTransport {
            typealias Handler = @Sendable (TransportRequest, Int) async throws -> TransportResponse
            private let handler: Handler
            private let recorded = Mutex<[TransportRequest]>([])

            init(_ handler: @escaping Handler) { self.handler = handler }

            var requests: [TransportRequest] { recorded.withLock { $0 } }

            func send(_ request: TransportRequest) async throws -> TransportResponse {
                let index = recorded.withLock { requests in
                    requests.append(request)
                    return requests.count - 1
                }
                return try await handler(request, index)
            }
        }

        /// A latch the transport waits on until the test opens it, so that callers pile up on one flight.
        actor Gate {
            private var isOpen = false
            private var waiters: [CheckedContinuation<Void, Never>] = []

            func open() {
                isOpen = true
                for waiter in waiters { waiter.resume() }
                waiters = []
            }

            func wait() async {
                if isOpen { return }
                await withCheckedContinuation { waiters.append($0) }
            }
        }

        /// A logger at `trace` level that keeps every line, and the handler to read them from.
        static func logger() -> (Logger, InMemoryLogHandler) {
            let handler = InMemoryLogHandler()
            var logger = Logger(label: "courier.test") { _ in handler }
            logger.logLevel = .trace
            return (logger, handler)
        }

        static func response(_ status: Int, _ body: String = "", headers: HeaderFields = [:]) -> TransportResponse {
            TransportResponse(statusCode: status, headers: headers, body: Data(body.utf8))
        }

        static func makeClient(
            _ transport: StubTransport, cache: ResponseCache? = nil, retryPolicy: RetryPolicy = .never,
            configure: (inout APIClient.Configuration) -> Void
        ) -> APIClient {
            var configuration = APIClient.Configuration(transport: transport, cache: cache, retryPolicy: retryPolicy)
            configure(&configuration)
            return APIClient(baseURL: baseURL, configuration: configuration)
        }

        /// Polls without sleeping until `condition` holds; gives up after 60 seconds of wall time (a bound for a hung
        /// test, not a measure of anything: real sockets under a loaded machine can take a while to deliver 50 requests).
        static func eventually(_ condition: () async -> Bool) async -> Bool {
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: .seconds(60))
            while clock.now < deadline {
                if await condition() { return true }
                await Task.yield()
            }
            return false
        }
    }
#endif
