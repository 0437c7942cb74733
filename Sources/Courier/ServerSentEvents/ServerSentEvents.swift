import Foundation

/// The events of a `text/event-stream`, as an asynchronous sequence that reconnects: returned by
/// ``APIClient/serverSentEvents(_:lastEventID:reconnectionDelay:maxReconnects:)``.
///
/// Each iteration connects when it starts (nothing is sent before), and keeps the stream open while it reads. When
/// the connection ends or drops, it connects again after the reconnection delay (the server's last `retry:`, or the
/// default), sending `Last-Event-ID` so that the server can resume where the stream stopped. It stops when the
/// iterating task is cancelled (closing the connection), when the server answers `204 No Content`, or after
/// `maxReconnects` reconnections in a row that delivered no event.
///
/// The reconnection delay is never shorter than ``minimumReconnectionDelay`` (a `retry: 0` would otherwise reconnect
/// hundreds of times a second). While reconnections deliver no event, the wait doubles each time, with jitter (a
/// random wait between half and all of it, so that clients dropped together do not return together), up to
/// ``maximumReconnectionDelay``; the first event resets it. A request that may not be sent twice (a method that is
/// not idempotent, such as `POST`, without an `Idempotency-Key` header) is never reconnected: its sequence ends when
/// the connection does, with the error when it broke.
///
/// An event's `id` is kept as the server sent it (``ServerSentEvent/lastEventID``), but an ID that is not a valid
/// header value (one with a control character, which the standard allows) is not sent as `Last-Event-ID`: the
/// reconnection goes without one, as if the stream had no ID, rather than failing for good.
///
/// A response that is not `200` with `Content-Type: text/event-stream` ends the sequence with an ``APIError``, as the
/// WHATWG standard fails such a connection rather than retrying it.
public struct ServerSentEvents: AsyncSequence, Sendable {
    /// One event.
    public typealias Element = ServerSentEvent

    let client: APIClient
    let request: APIRequest<Data>
    let lastEventID: String?
    let reconnectionDelay: Duration
    let maxReconnects: Int?

    /// The shortest wait before a reconnection, whatever the server asks with `retry:` (a `retry: 0` would otherwise
    /// reconnect hundreds of times a second) and whatever the caller's `reconnectionDelay`: 100 ms.
    public static let minimumReconnectionDelay = Duration.milliseconds(100)

    /// The longest wait that backing off after failed reconnections grows to: 30 seconds, or the reconnection delay
    /// itself when the server or the caller asked for a longer one.
    public static let maximumReconnectionDelay = Duration.seconds(30)

    /// Returns an iterator that connects on its first `next()`.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(events: self)
    }

    /// Reads the events of one iteration, reconnecting as needed.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private let events: ServerSentEvents
        private var parser: ServerSentEventParser
        private var body: ByteStream?
        private var pending: [ServerSentEvent] = []
        private var hasConnected = false
        private var failedReconnects = 0
        private var lastFailure: (any Error)?
        private var isFinished = false

        init(events: ServerSentEvents) {
            self.events = events
            self.parser = ServerSentEventParser(lastEventID: events.lastEventID)
        }

        /// The next event; `nil` once the stream has stopped.
        ///
        /// - Throws: ``APIError`` when the server refuses the stream or after too many failed reconnections,
        ///   `CancellationError` when the task is cancelled.
        public mutating func next() async throws -> ServerSentEvent? {
            while true {
                if !pending.isEmpty { return pending.removeFirst() }
                if isFinished { return nil }
                try Task.checkCancellation()
                guard let body else {
                    try await connect()
                    continue
                }
                let chunk: Data?
                do {
                    chunk = try await body.nextChunk()
                } catch {
                    // Asked in a plain function (`Docs/Performance.md#async-frames`): a cancellation goes on as it is.
                    if APIClient.isCancellation(error) { throw error }
                    lastFailure = error
                    chunk = nil
                }
                guard let chunk else {
                    self.body = nil
                    parser.reset()
                    if !events.mayReconnect {
                        isFinished = true
                        if let lastFailure { throw lastFailure }
                    }
                    continue
                }
                pending = try parser.feed(chunk)
                if !pending.isEmpty { failedReconnects = 0 }
            }
        }

        /// Opens the stream, after the reconnection delay when it is a reconnection.
        private mutating func connect() async throws {
            if hasConnected {
                if let limit = events.maxReconnects, failedReconnects >= limit {
                    isFinished = true
                    if let lastFailure { throw lastFailure }
                    return
                }
                let delay = reconnectionDelay()
                failedReconnects += 1
                try await events.client.configuration.clock.sleep(for: delay)
            }
            hasConnected = true
            var request = events.request
            request.headers["Accept"] = "text/event-stream"
            request.headers["Cache-Control"] = "no-store"
            if let id = parser.lastEventID, !id.isEmpty, Self.isValidFieldValue(id) {
                request.headers["Last-Event-ID"] = id
            }
            let response: StreamedResponse
            do {
                response = try await events.client.stream(request)
            } catch let error as APIError where error.isReconnectable && events.mayReconnect {
                lastFailure = error
                return
            }
            if response.statusCode == 204 {
                isFinished = true
                return
            }
            let type = response.headers["Content-Type"] ?? ""
            guard response.statusCode == 200,
                type.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
                    == "text/event-stream"
            else {
                isFinished = true
                throw APIError.invalidResponse(
                    reason: "expected a 200 text/event-stream, got status \(response.statusCode) with Content-Type "
                        + "\"\(type)\"",
                    underlying: nil)
            }
            body = response.body
        }

        /// The wait before the next reconnection: the server's `retry:` (or the caller's delay), at least
        /// ``ServerSentEvents/minimumReconnectionDelay``; after reconnections that delivered nothing, doubled for each,
        /// up to ``ServerSentEvents/maximumReconnectionDelay`` (or the base, when longer), with equal jitter.
        private func reconnectionDelay() -> Duration {
            let base = Swift.max(
                parser.reconnectionTime ?? events.reconnectionDelay, ServerSentEvents.minimumReconnectionDelay)
            guard failedReconnects > 0 else { return base }
            let cap = Swift.max(base, ServerSentEvents.maximumReconnectionDelay)
            var ceiling = base
            // Doubling stops at the cap, so it never overflows whatever the base.
            for _ in 0..<failedReconnects {
                guard ceiling <= cap / 2 else {
                    ceiling = cap
                    break
                }
                ceiling *= 2
            }
            let half = ceiling / 2
            return half + half * Double.random(in: 0...1)
        }

        /// Whether `id` may be sent as a header value: no control character but tab, as every header is checked.
        private static func isValidFieldValue(_ id: String) -> Bool {
            var fields = HeaderFields()
            fields["Last-Event-ID"] = id
            return (try? fields.validate()) != nil
        }
    }
}

extension ServerSentEvents {
    /// Whether a dropped connection may be opened again: only for a request the client may send twice, by the rule
    /// retries and hedges keep (``RetryPolicy/mayResend(_:)``).
    var mayReconnect: Bool {
        client.configuration.retryPolicy.mayResend(method: request.method, headers: request.headers)
    }
}

@available(*, unavailable)
extension ServerSentEvents.AsyncIterator: Sendable {}

extension APIError {
    /// Failures after which an event stream connects again (the WHATWG standard reconnects after a network error):
    /// the server could not be reached or the connection broke. A refusal (a status, an invalid request) is final.
    var isReconnectable: Bool {
        switch self {
        case .transport, .timedOut: true
        default: false
        }
    }
}

extension APIClient {
    // MARK: Server-Sent Events

    /// Opens a `text/event-stream` and returns its events as an asynchronous sequence that reconnects.
    ///
    /// Each connection is a streamed call (``stream(_:)``): adapters, authorization and one resend after a `401`,
    /// retries of the connection itself, events and redaction, with `Accept: text/event-stream` and, when known,
    /// `Last-Event-ID`. It is never coalesced or cached. A connection that stays silent for the request's
    /// ``APIRequest/timeout`` (the client's, 60 seconds, by default) counts as dropped and is reconnected: a server
    /// that may stay silent longer keeps the stream alive with comments (`:` lines), or the request sets a longer
    /// timeout.
    ///
    /// ```swift
    /// for try await event in client.serverSentEvents(APIRequest<Data>.get("/notifications")) {
    ///     print(event.type, event.data)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - request: The request that opens the stream.
    ///   - lastEventID: The ID of the last event already seen, to resume after it.
    ///   - reconnectionDelay: How long to wait before reconnecting until the server sets its own with `retry:`;
    ///     3 seconds by default, never less than ``ServerSentEvents/minimumReconnectionDelay``, and backed off while
    ///     reconnections deliver nothing (see ``ServerSentEvents``). Waited on the client's
    ///     ``APIClient/Configuration/clock``. A request that may not be sent twice (a `POST` without an
    ///     `Idempotency-Key`) is never reconnected.
    ///   - maxReconnects: How many reconnections in a row may fail to deliver an event before the sequence ends
    ///     (with the last failure); `nil`, the default, reconnects for as long as the task iterates.
    /// - Returns: The events.
    public func serverSentEvents(
        _ request: APIRequest<Data>, lastEventID: String? = nil, reconnectionDelay: Duration = .seconds(3),
        maxReconnects: Int? = nil
    ) -> ServerSentEvents {
        ServerSentEvents(
            client: self, request: request, lastEventID: lastEventID, reconnectionDelay: reconnectionDelay,
            maxReconnects: maxReconnects)
    }
}
