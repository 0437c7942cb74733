#if Observability
    import InMemoryTracing
    import Synchronization
    import Tracing

    /// The tracing package's in-memory tracer, with W3C ids (32 and 16 lowercase hex digits) and W3C propagation: its
    /// `inject` writes `traceparent: 00-<trace id>-<span id>-01`, as an OpenTelemetry tracer does, and `extract` reads it.
    /// Everything else (spans, their attributes, links and status, finished spans) is the in-memory tracer's.
    struct W3CTracer: Tracer {
        let memory: InMemoryTracer

        init() {
            let counter = Mutex<UInt64>(0)
            let next: @Sendable () -> UInt64 = {
                counter.withLock { value in
                    value += 1
                    return value
                }
            }
            memory = InMemoryTracer(
                idGenerator: .init(
                    nextTraceID: { Self.hex(next(), digits: 32) }, nextSpanID: { Self.hex(next(), digits: 16) }))
        }

        var finishedSpans: [FinishedInMemorySpan] { memory.finishedSpans }

        func startSpan<Instant: TracerInstant>(
            _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
            at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
        ) -> InMemorySpan {
            memory.startSpan(
                operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID,
                line: line)
        }

        func forceFlush() { memory.forceFlush() }

        func inject<Carrier, Inject: Injector>(
            _ context: ServiceContext, into carrier: inout Carrier, using injector: Inject
        )
        where Carrier == Inject.Carrier {
            guard let span = context.inMemorySpanContext else { return }
            injector.inject(
                Self.traceparent(trace: span.traceID, span: span.spanID), forKey: "traceparent", into: &carrier)
        }

        func extract<Carrier, Extract: Extractor>(
            _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract
        )
        where Carrier == Extract.Carrier {
            guard let value = extractor.extract(key: "traceparent", from: carrier) else { return }
            let parts = value.split(separator: "-")
            guard parts.count == 4 else { return }
            context.inMemorySpanContext = InMemorySpanContext(
                traceID: String(parts[1]), spanID: String(parts[2]), parentSpanID: nil)
        }

        static func traceparent(trace: String, span: String) -> String { "00-\(trace)-\(span)-01" }

        private static func hex(_ value: UInt64, digits: Int) -> String {
            let text = String(value, radix: 16)
            return String(repeating: "0", count: digits - text.count) + text
        }
    }
#endif
