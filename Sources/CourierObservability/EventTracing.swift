#if Observability
    import Courier
    import Foundation
    import Tracing

    /// A span per call and a child span per attempt, with OpenTelemetry's HTTP client attribute names.
    ///
    /// - The call span (`kind: internal`, named after the method, `GET`) starts in the caller's task as the call starts,
    ///   under `ServiceContext.current`, and ends with the call: `http.response.status_code`, `courier.source`,
    ///   `courier.joined`, and on failure `error.type` with an error status. A joiner's span links to its leader's.
    /// - Each attempt span (`kind: client`) is a child of its call's span, started just before the attempt goes to the
    ///   transport; the tracer injects its context into the attempt's headers (`traceparent` with OpenTelemetry), so
    ///   the server's span is its child. It ends with the response (`http.response.status_code`) or the failure.
    /// - Both carry `http.request.method`, `url.full` (redacted), `server.address` and `server.port`; a retry or a
    ///   resend carries `http.request.resend_count`.
    struct EventTracing: Sendable {
        let tracer: any Tracer

        // MARK: Calls

        /// Starts the call's span under the caller's context.
        func startCall(method: RequestMethod, url: String) -> any Span {
            let span = tracer.startSpan(
                Self.spanName(method), context: ServiceContext.current ?? .topLevel, ofKind: .internal)
            Self.describeTarget(of: span, method: method, url: url)
            return span
        }

        /// Ends spans as the steps that close them arrive.
        func record(_ event: ClientEvent, of call: CallState?, key: CallKey, calls: CallTable) {
            switch event.kind {
            case .responseReceived(_, let status, _, _):
                guard let span = calls.update(key, { state in state.attemptSpan.take() }) ?? nil else { return }
                span.attributes["http.response.status_code"] = status
                if status >= 400 { Self.fail(span, type: "\(status)", message: nil) }
                span.end()
            case .retryScheduled(_, _, .failure(let reason)):
                guard let span = calls.update(key, { state in state.attemptSpan.take() }) ?? nil else { return }
                Self.fail(span, type: Self.errorType(reason), message: reason)
                span.end()
            case .joinedFlight(let leader):
                guard let span = call?.span,
                    let context = calls.spanContext(of: CallKey(log: key.log, id: leader))
                else { return }
                span.addLink(SpanLink(context: context, attributes: ["courier.leader_call_id": "\(leader)"]))
            case .requestFinished(let source, let status, _):
                guard let call else { return }
                call.attemptSpan?.end()
                guard let span = call.span else { return }
                span.attributes["http.response.status_code"] = status
                span.attributes["courier.source"] = "\(source)"
                span.attributes["courier.joined"] = call.joined
                if status >= 400 { Self.fail(span, type: "\(status)", message: nil) }
                span.end()
            case .requestFailed(let error, _):
                guard let call else { return }
                if let attempt = call.attemptSpan {
                    Self.fail(attempt, type: Self.errorType(error), message: error)
                    attempt.end()
                }
                guard let span = call.span else { return }
                span.attributes["courier.joined"] = call.joined
                Self.fail(span, type: Self.errorType(error), message: error)
                span.end()
            default:
                break
            }
        }

        // MARK: Attempts

        /// Starts the attempt's span as a child of the call's and injects its context into `headers`.
        ///
        /// An attempt made after its call ended (the background revalidation of a stale response, or a flight whose
        /// leader left) gets no span: no step would end it. It carries the current context instead, so the server's span
        /// still joins the caller's trace.
        func startAttempt(_ attempt: Int, key: CallKey, calls: CallTable, headers: inout HeaderFields) {
            guard let call = calls[key], let parent = call.span else {
                if let current = ServiceContext.current {
                    tracer.inject(current, into: &headers, using: HeaderFieldsInjector())
                }
                return
            }
            let span = tracer.startSpan(Self.spanName(call.method), context: parent.context, ofKind: .client)
            Self.describeTarget(of: span, method: call.method, url: call.url)
            if attempt > 1 { span.attributes["http.request.resend_count"] = attempt - 1 }
            let previous = calls.update(key) { state in
                state.led = true
                defer { state.attemptSpan = span }
                return state.attemptSpan
            }
            switch previous {
            case nil: span.end()  // The call ended meanwhile (its caller left): nothing else would end the span.
            case let open??: open.end()  // An attempt no step closed ends when the next one starts.
            case .some(nil): break
            }
            tracer.inject(span.context, into: &headers, using: HeaderFieldsInjector())
        }

        // MARK: Attributes

        /// The method as OpenTelemetry names a span: the method when it is a standard one, `HTTP` otherwise.
        static func spanName(_ method: RequestMethod) -> String {
            standardMethods.contains(method.rawValue) ? method.rawValue : "HTTP"
        }

        private static let standardMethods: Set<String> = [
            "CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE",
        ]

        /// `http.request.method` (`_OTHER` with `http.request.method_original` for a non-standard one), `url.full`,
        /// `server.address` and `server.port`.
        static func describeTarget(of span: any Span, method: RequestMethod, url: String) {
            span.updateAttributes { attributes in
                if standardMethods.contains(method.rawValue) {
                    attributes["http.request.method"] = method.rawValue
                } else {
                    attributes["http.request.method"] = "_OTHER"
                    attributes["http.request.method_original"] = method.rawValue
                }
                attributes["url.full"] = url
                guard let components = URLComponents(string: url), let host = components.host else { return }
                attributes["server.address"] = host
                if let port = components.port
                    ?? (components.scheme == "https" ? 443 : components.scheme == "http" ? 80 : nil)
                {
                    attributes["server.port"] = port
                }
            }
        }

        /// Marks a span failed: `error.type` and an error status with the redacted description.
        static func fail(_ span: any Span, type: String, message: String?) {
            span.attributes["error.type"] = type
            span.setStatus(SpanStatus(code: .error, message: message))
        }

        /// A low-cardinality `error.type` from an event's redacted description (events carry the description of an
        /// ``APIError``, not the error): `timeout`, `transport`, the status for a refused status, and so on; `_OTHER`
        /// (OpenTelemetry's value when nothing better is known) for anything else.
        static func errorType(_ description: String) -> String {
            if description == "cancelled" { return "cancelled" }
            if let status = refusedStatus(in: description) { return status }
            return errorTypes.first { description.hasPrefix($0.prefix) }?.type ?? "_OTHER"
        }

        private static let errorTypes: [(prefix: String, type: String)] = [
            ("The request timed out", "timeout"),
            ("Transport failure", "transport"),
            ("Invalid request", "invalid_request"),
            ("The request body could not be encoded", "encoding_failed"),
            ("A request adapter failed", "adapter_failed"),
            ("The response (status", "decoding_failed"),
            ("The server sent an invalid response", "invalid_response"),
            ("The response body was larger", "response_too_large"),
            ("No usable cached response", "not_cached"),
            ("The server refused the request's credentials", "401"),
            ("Authentication failed", "authentication_failed"),
        ]

        /// The status of `The server answered with status 503 (…)`, as OpenTelemetry wants it for `error.type`.
        private static func refusedStatus(in description: String) -> String? {
            let prefix = "The server answered with status "
            guard description.hasPrefix(prefix) else { return nil }
            let digits = description.dropFirst(prefix.count).prefix { $0.isASCII && $0.isNumber }
            return digits.isEmpty ? nil : String(digits)
        }
    }

    /// Writes a tracer's context fields into an attempt's header fields.
    struct HeaderFieldsInjector: Injector {
        func inject(_ value: String, forKey key: String, into carrier: inout HeaderFields) {
            carrier[key] = value
        }
    }
#endif
