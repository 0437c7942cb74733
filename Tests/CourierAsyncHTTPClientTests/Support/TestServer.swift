#if AsyncHTTPClient
    import Foundation
    import NIOCore
    import NIOHTTP1
    import NIOPosix
    import Synchronization

    /// An HTTP/1.1 server on 127.0.0.1 (a free port), built on SwiftNIO, whose routes are the behaviours a transport
    /// must handle: JSON, chunked and encoded bodies, uploads, redirects, a token gate, a body that stalls, one that
    /// resets, and one that fills the connection as fast as the client reads (see ``ServerRoutes``).
    ///
    /// Each test starts its own with ``withTestServer(_:)``; what the server saw is in ``log``.
    final class TestServer: Sendable {
        let port: Int
        let log: ServerLog
        private let channel: any Channel

        var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

        func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

        private init(channel: any Channel, log: ServerLog) {
            self.channel = channel
            self.log = log
            self.port = channel.localAddress?.port ?? 0
        }

        static func start() async throws -> TestServer {
            let log = ServerLog()
            let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        try channel.pipeline.syncOperations.addHandler(RouteHandler(log: log))
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
            return TestServer(channel: channel, log: log)
        }

        func shutdown() async {
            try? await channel.close()
        }
    }

    /// Runs `body` with a server of its own, and stops the server afterwards.
    func withTestServer<Result>(_ body: (TestServer) async throws -> Result) async throws -> Result {
        let server = try await TestServer.start()
        do {
            let result = try await body(server)
            await server.shutdown()
            return result
        } catch {
            await server.shutdown()
            throw error
        }
    }

    /// What the server saw, in order, and a way to wait for something to happen without sleeping.
    final class ServerLog: Sendable {
        enum Event: Sendable, Equatable {
            /// A request's head and the number of body bytes it carried.
            case request(method: String, path: String, headers: [String: String], bodyBytes: Int)
            /// The response head and its first bytes of a route that then waits were written.
            case responding(path: String)
            /// The connection that served `path` closed before its response was complete.
            case closedEarly(path: String)
            /// The flood route could not write more: `written` bytes were handed to the connection so far.
            case blocked(written: Int)
            /// The flood route wrote its whole body.
            case finished(written: Int)
        }

        private struct State {
            var events: [Event] = []
            var waiters:
                [(id: Int, predicate: @Sendable (Event) -> Bool, continuation: CheckedContinuation<Event?, Never>)] = []
            var lastWaiter = 0
        }

        private let state = Mutex(State())

        var events: [Event] { state.withLock { $0.events } }

        /// The requests the server received, in order.
        var requests: [(method: String, path: String, headers: [String: String], bodyBytes: Int)] {
            events.compactMap { event in
                guard case .request(let method, let path, let headers, let bytes) = event else { return nil }
                return (method, path, headers, bytes)
            }
        }

        func record(_ event: Event) {
            let ready = state.withLock { state in
                state.events.append(event)
                let ready = state.waiters.filter { $0.predicate(event) }.map(\.continuation)
                state.waiters.removeAll { $0.predicate(event) }
                return ready
            }
            for continuation in ready { continuation.resume(returning: event) }
        }

        /// The first event, past or future, that matches `predicate`; `nil` when the waiting task is cancelled (a test's
        /// time limit), so that a test waiting for something that never happens fails instead of hanging the run.
        func first(where predicate: @escaping @Sendable (Event) -> Bool) async -> Event? {
            let id = state.withLock { state in
                state.lastWaiter += 1
                return state.lastWaiter
            }
            return await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let found = state.withLock { state -> Event?? in
                        if let event = state.events.first(where: predicate) { return .some(event) }
                        if Task.isCancelled { return .some(nil) }
                        state.waiters.append((id, predicate, continuation))
                        return nil
                    }
                    if let found { continuation.resume(returning: found) }
                }
            } onCancel: {
                let waiter = state.withLock { state -> CheckedContinuation<Event?, Never>? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index).continuation
                }
                waiter?.resume(returning: nil)
            }
        }
    }
#endif
