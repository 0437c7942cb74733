#if AsyncHTTPClient
    import AsyncHTTPClient
    import Courier
    import CourierAsyncHTTPClient
    import Foundation
    import Synchronization
    import Testing
    import Tracing

    /// AsyncHTTPClient starts a span for every request with the tracer its configuration holds. The transport drops a
    /// tracer that records nothing (swift-distributed-tracing's `NoOpTracer`, what a process that bootstrapped no
    /// tracer has): its span cost about 9,000 instructions a request over nginx. A tracer that records is kept, and
    /// sees every request.
    @Suite("AsyncHTTPClientTransport: AsyncHTTPClient's own tracing")
    struct AsyncHTTPClientTracingTests {
        @Test func aTracerThatRecordsNothingIsDropped() async throws {
            #expect(HTTPClient.Configuration().tracing.tracer is NoOpTracer, "no tracer is bootstrapped in the tests")
            #expect(AsyncHTTPClientTransport.defaultConfiguration.tracing.tracer == nil)
            let transport = AsyncHTTPClientTransport(configuration: HTTPClient.Configuration())
            #expect(transport.client.tracer == nil)
            try await transport.shutdown()
        }

        @Test func aTracerThatRecordsIsKeptAndSeesEveryRequest() async throws {
            try await withTestServer { server in
                let tracer = NamingTracer()
                var configuration = AsyncHTTPClientTransport.defaultConfiguration
                configuration.tracing.tracer = tracer
                let transport = AsyncHTTPClientTransport(configuration: configuration)
                let client = APIClient(baseURL: server.baseURL, configuration: .init(transport: transport, cache: nil))
                _ = try await client.send(APIRequest<Data>.get("/json"))
                _ = try await client.send(APIRequest<Data>.get("/headers"))
                #expect(tracer.names == ["GET", "GET"])
                try await transport.shutdown()
            }
        }
    }

    /// A tracer that records the names of the spans it starts, and is otherwise `NoOpTracer`.
    private struct NamingTracer: Tracer {
        typealias Span = NoOpTracer.NoOpSpan
        private let started = Recorded()

        var names: [String] { started.names.withLock { $0 } }

        func startSpan<Instant: TracerInstant>(
            _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
            at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
        ) -> NoOpTracer.NoOpSpan {
            started.names.withLock { $0.append(operationName) }
            return NoOpTracer.NoOpSpan(context: context())
        }

        func forceFlush() {}

        func inject<Carrier, Inject: Injector>(
            _ context: ServiceContext, into carrier: inout Carrier, using injector: Inject
        ) where Inject.Carrier == Carrier {}

        func extract<Carrier, Extract: Extractor>(
            _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract
        ) where Extract.Carrier == Carrier {}

        private final class Recorded: Sendable {
            let names = Mutex<[String]>([])
        }
    }
#endif
