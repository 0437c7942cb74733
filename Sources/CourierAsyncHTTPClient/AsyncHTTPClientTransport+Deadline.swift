#if AsyncHTTPClient
    import AsyncHTTPClient
    import Courier
    import Foundation
    import NIOCore
    import NIOHTTP1
    import Synchronization

    extension AsyncHTTPClientTransport {
        /// Sends `request` and returns the response with its whole body, or throws
        /// ``Courier/TransportDeadline/timeoutError`` once `deadline` passes. This is what ``Courier/APIClient`` calls
        /// for every attempt.
        ///
        /// The exchange runs on AsyncHTTPClient's task API, which can be stopped from outside: the deadline fails the
        /// exchange in flight (AsyncHTTPClient closes its connection), and the calling task awaits the response directly.
        /// The default would run every attempt in a task of its own and race it against the deadline; on loopback that
        /// task, and the thread switches it brings, cost about a third of the throughput. A request with a
        /// ``Courier/TransportRequest/streamedBody`` still goes that way, since this API takes a body only as a whole.
        ///
        /// - Parameters:
        ///   - request: The request to send.
        ///   - deadline: When the attempt must end, on the client's clock.
        /// - Returns: The response, whatever its status code.
        /// - Throws: ``Courier/TransportDeadline/timeoutError`` past the deadline, ``Courier/APIError/transport(_:underlying:)``
        ///   when the exchange failed, ``Courier/APIError/responseTooLarge(limit:)`` past ``maxResponseBytes``,
        ///   `CancellationError` when the calling task was cancelled.
        public func send(_ request: TransportRequest, deadline: TransportDeadline) async throws -> TransportResponse {
            // The hop holds the request (one reference) and reads its URL once, as the origin redirects are judged by.
            var hop = RedirectHop(request)
            guard hop.streamedBody == nil else { return try await sendRacing(request, deadline: deadline) }
            let exchange = StoppableExchange()
            let expiry = deadline.onExpiry { exchange.stop(deadline.timeoutError) }
            defer { expiry.cancel() }
            for _ in 0...Self.maxRedirects {
                let (head, body) = try await send(hop, in: exchange)
                guard let next = hop.following(status: head.statusCode, headers: head.fields) else {
                    return Self.response(head, body)
                }
                hop = next
            }
            throw APIError.transport(.other, underlying: HTTPClientError.redirectLimitReached)
        }

        /// A request with a streamed body, raced against its deadline in a task of its own (the task API takes a body
        /// only as a whole). In a frame of its own: inlined, its values took room in the frame of every attempt.
        @inline(never)
        private func sendRacing(_ request: TransportRequest, deadline: TransportDeadline) async throws
            -> TransportResponse
        {
            try await deadline.race { try await self.send(request) }
        }

        /// The response a hop's head and body make.
        @inline(never)
        private static func response(_ head: ResponseHead, _ body: ByteBuffer?) -> TransportResponse {
            TransportResponse(statusCode: head.statusCode, headers: head.headers, body: body.map { Data($0) } ?? Data())
        }

        /// One hop on AsyncHTTPClient's task API, stopped by `exchange` or by cancelling the calling task; started on
        /// the transport's home event loop when it is the only exchange in flight, on the group's next loop otherwise
        /// (see ``EventLoopAffinity``).
        ///
        /// The calling task makes one trip to the loop and is resumed from it: started from the caller's thread
        /// instead, AsyncHTTPClient sent three closures to the loop (one to note the request queued for a connection,
        /// one to register its own callback on the task's future, one more for the caller's), about 2,000
        /// instructions per request over nginx with 100 in flight (`Docs/Benchmarks.md`, session 19). A hop the pool
        /// may open a connection for is still started from the caller's thread (``EventLoopAffinity``).
        private nonisolated(nonsending) func send(_ hop: RedirectHop, in exchange: StoppableExchange)
            async throws
            -> (ResponseHead, ByteBuffer?)
        {
            let delegate = BufferedResponse(method: hop.method, limit: maxResponseBytes)
            let placement = affinity.enter()
            defer { affinity.leave() }
            do {
                return try await withTaskCancellationHandler {
                    try await withUnsafeThrowingContinuation { continuation in
                        start(hop, delegate: delegate, at: placement, in: exchange, resuming: continuation)
                    }
                } onCancel: {
                    // The task may not exist yet: the exchange fails it as soon as it starts.
                    exchange.stop(HTTPClientError.cancelled)
                }
            } catch {
                throw Self.translate(error, for: hop.origin)
            }
        }

        /// Builds the hop's request and hands it to AsyncHTTPClient, on the placement's loop or from this thread; the
        /// continuation is resumed on the loop once the delegate has its last event.
        ///
        /// A plain function, so that the `HTTPClient.Request` (a large value) lives on this thread's stack and in the
        /// closure that starts it, never in an async frame: built in the async function that awaited the hop, it was
        /// copied through three frames of the attempt's task, which took 2.3 KB of task memory per attempt
        /// (`Docs/Benchmarks.md`, session 21).
        @inline(never)
        private func start(
            _ hop: RedirectHop, delegate: BufferedResponse, at placement: EventLoopAffinity.Placement,
            in exchange: StoppableExchange,
            resuming continuation: UnsafeContinuation<(ResponseHead, ByteBuffer?), any Error>
        ) {
            let request: HTTPClient.Request
            do {
                request = try hop.taskRequest()
            } catch {
                return continuation.resume(throwing: error)
            }
            let client = client
            let eventLoop = placement.loop
            let start: @Sendable () -> Void = {
                let task = client.execute(
                    request: request, delegate: delegate, eventLoop: .delegate(on: eventLoop), deadline: nil)
                exchange.start(task)
                // On the loop, after the delegate's last event: its state is read where it was written.
                task.futureResult.whenComplete { result in
                    continuation.resume(with: result.flatMap { delegate.received })
                }
            }
            // As with `EventLoopFuture.get()`, the loop must run the closure: a group shut down under a client still
            // in use would drop it there too.
            if placement.startsOnLoop { eventLoop.execute(start) } else { start() }
        }
    }

    /// The AsyncHTTPClient task an attempt is running, so that its deadline (or its caller's cancellation) can fail it,
    /// whichever hop it is on, and even before the hop's task exists.
    private final class StoppableExchange: Sendable {
        private struct State {
            var task: HTTPClient.Task<Void>?
            var reason: (any Error)?
        }

        private let state = Mutex(State())

        /// The hop now running; it is failed at once when the attempt was stopped already.
        func start(_ task: HTTPClient.Task<Void>) {
            let reason = state.withLock { state -> (any Error)? in
                state.task = task
                return state.reason
            }
            if let reason { task.fail(reason: reason) }
        }

        /// Fails the hop running now, and any later one, with `reason` (`HTTPClientError.cancelled` for a cancelled
        /// caller, as `HTTPClient.Task.cancel()` fails it).
        func stop(_ reason: any Error) {
            let task = state.withLock { state in
                state.reason = reason
                return state.task
            }
            task?.fail(reason: reason)
        }
    }

    /// Collects a response's head and body on the event loop, failing the exchange as soon as the body is known to pass
    /// the limit: from `Content-Length`, or as the bytes arrive.
    ///
    /// AsyncHTTPClient calls a delegate on one event loop, one event at a time, so its state needs no lock; ``received``
    /// is read on that loop too, once the task's future has succeeded.
    ///
    /// The task's result is `Void`, and the response stays here: AsyncHTTPClient's task API is generic over the
    /// delegate and runs unspecialized, so every copy and destruction of the result (in the task's promise, its future,
    /// the callbacks) goes through the type's value witnesses: for a head and a body, thousands of instructions per
    /// request over nginx; for `Void`, nothing (`Docs/Benchmarks.md`, session 19, has the counts).
    private final class BufferedResponse: HTTPClientResponseDelegate, @unchecked Sendable {
        typealias Response = Void

        private let method: RequestMethod
        private let limit: Int
        private var head: ResponseHead?
        private var body: ByteBuffer?

        init(method: RequestMethod, limit: Int) {
            self.method = method
            self.limit = limit
        }

        /// The response, read on the event loop once the task's future has succeeded.
        var received: Result<(ResponseHead, ByteBuffer?), any Error> {
            guard let head else { return .failure(HTTPClientError.remoteConnectionClosed) }
            return .success((head, body))
        }

        func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
            let received = ResponseHead(head, method: method)
            self.head = received
            if let length = received.announcedLength, length > limit {
                return task.eventLoop.makeFailedFuture(APIError.responseTooLarge(limit: limit))
            }
            return task.eventLoop.makeSucceededVoidFuture()
        }

        func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ part: ByteBuffer) -> EventLoopFuture<Void> {
            guard part.readableBytes <= limit - (body?.readableBytes ?? 0) else {
                return task.eventLoop.makeFailedFuture(APIError.responseTooLarge(limit: limit))
            }
            if body == nil {
                body = part
            } else {
                body?.writeImmutableBuffer(part)
            }
            return task.eventLoop.makeSucceededVoidFuture()
        }

        func didFinishRequest(task: HTTPClient.Task<Response>) throws {
            guard head != nil else { throw HTTPClientError.remoteConnectionClosed }
        }
    }
#endif
