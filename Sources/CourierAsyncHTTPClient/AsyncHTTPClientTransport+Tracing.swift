#if AsyncHTTPClient
    import AsyncHTTPClient
    import Tracing

    extension AsyncHTTPClientTransport {
        /// `configuration` without a tracer when its tracer is swift-distributed-tracing's `NoOpTracer`, which records
        /// nothing.
        ///
        /// AsyncHTTPClient keeps the tracer the process had when the configuration was made, `NoOpTracer` unless the
        /// service bootstrapped one, and starts a span for every request it is handed. On the path this transport
        /// takes (`execute(request:delegate:)`) that span is named `"\(request.method)"`, and the interpolation goes
        /// through reflection: about 9,000 instructions a request over nginx (callgrind), 3 % of a whole exchange, to
        /// record nothing. Without a tracer AsyncHTTPClient skips the span. A real tracer is kept as it is.
        static func withoutNoOpTracing(_ configuration: HTTPClient.Configuration) -> HTTPClient.Configuration {
            guard configuration.tracing.tracer is NoOpTracer else { return configuration }
            var configuration = configuration
            configuration.tracing.tracer = nil
            return configuration
        }
    }
#endif
