import Foundation

@testable import Courier

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An in-process HTTP/1.1 server on `127.0.0.1` with an ephemeral port, for tests that need real sockets.
///
/// Each test creates its own server, registers routes, and points a `URLSession` at `baseURL`. One dedicated
/// `Thread` accepts connections and one `Thread` per connection serves requests with blocking POSIX sockets
/// (keep-alive is supported). Route handlers are `async`: each runs in a `Task` while its connection thread
/// waits. `shutdown()` (or dropping the last reference) closes the listening socket and every connection, and
/// returns once the server's threads have exited.
final class TestServer: Sendable {
    /// Handles one request. Runs in a `Task`; it is cancelled if the client disconnects or the server stops.
    typealias Handler = @Sendable (TestServer.Request) async -> TestServer.Reply

    /// A fully received request (head and body).
    struct Request: Sendable {
        let method: String
        /// The request target as sent: path plus query.
        let target: String
        /// The path, without the query.
        let path: String
        /// The query, without the `?`, or `nil` when the target has none.
        let query: String?
        /// Every header, in arrival order, repeats kept.
        let headers: [(name: String, value: String)]
        /// The body, de-chunked if it arrived with `Transfer-Encoding: chunked`.
        let body: Data

        /// The value of the first header called `name` (case-insensitive).
        func header(_ name: String) -> String? {
            let wanted = name.lowercased()
            return headers.first { $0.name.lowercased() == wanted }?.value
        }
    }

    /// What a route answers: a normal response, raw bytes, a stall, or an immediate close.
    struct Reply: Sendable {
        enum Kind: Sendable {
            case response(status: Int, headers: [(String, String)], body: Data)
            case raw(Data, close: Bool)
            case repeated(head: Data, chunk: Data, count: Int, holdOpen: Bool)
            case reset(Data)
            case streamed(head: Data, next: @Sendable () async -> Data?, ending: StreamEnding)
            case stall
            case close
        }

        let kind: Kind

        /// A normal response. `Content-Length` is added unless `headers` already frame the body.
        init(status: Int, headers: [(String, String)] = [], body: Data = Data()) {
            kind = .response(status: status, headers: headers, body: body)
        }

        private init(kind: Kind) {
            self.kind = kind
        }

        /// A UTF-8 body with `Content-Type: text/plain; charset=utf-8` (unless `headers` set one).
        static func text(_ s: String, status: Int = 200, headers: [(String, String)] = []) -> Reply {
            Reply(status: status, headers: withContentType("text/plain; charset=utf-8", headers), body: Data(s.utf8))
        }

        /// A UTF-8 body with `Content-Type: application/json` (unless `headers` set one).
        static func json(_ s: String, status: Int = 200, headers: [(String, String)] = []) -> Reply {
            Reply(status: status, headers: withContentType("application/json", headers), body: Data(s.utf8))
        }

        /// Write these exact bytes, then close the connection if `close` (for fault tests).
        static func raw(_ bytes: Data, close: Bool = true) -> Reply {
            Reply(kind: .raw(bytes, close: close))
        }

        /// Write `head`, then `chunk` `count` times (without holding the whole body in memory), then close, or, if
        /// `holdOpen`, keep the connection open without writing more until the client goes away. Stops as soon as
        /// the client goes away. For bodies larger than a test should allocate, or that never end.
        static func repeated(head: Data, chunk: Data, count: Int, holdOpen: Bool = false) -> Reply {
            Reply(kind: .repeated(head: head, chunk: chunk, count: count, holdOpen: holdOpen))
        }

        /// Write these exact bytes, then reset the connection (TCP RST instead of an orderly close).
        static func reset(after bytes: Data) -> Reply {
            Reply(kind: .reset(bytes))
        }

        /// How a streamed body ends.
        enum StreamEnding: Sendable {
            /// The last chunk (`0\r\n\r\n`), then the connection closes.
            case finish
            /// A TCP reset instead of the last chunk: the body breaks off mid-way.
            case reset
        }

        /// A chunked response whose body is produced while it is sent: `next` is called (in a task, while the
        /// connection thread waits) for each chunk until it returns nil, so a test controls how fast the body
        /// arrives and when it stops. Stops as soon as the client goes away.
        static func streamed(
            status: Int = 200, headers: [(String, String)] = [], ending: StreamEnding = .finish,
            next: @escaping @Sendable () async -> Data?
        ) -> Reply {
            var head = "HTTP/1.1 \(status) \(HTTPWire.reason(status))\r\nTransfer-Encoding: chunked\r\n"
            head += "Connection: close\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            return Reply(kind: .streamed(head: Data((head + "\r\n").utf8), next: next, ending: ending))
        }

        /// Never answer; hold the connection open until the client disconnects or the server shuts down.
        static var stall: Reply { Reply(kind: .stall) }

        /// Close the connection immediately without writing anything.
        static var close: Reply { Reply(kind: .close) }

        private static func withContentType(_ type: String, _ headers: [(String, String)]) -> [(String, String)] {
            headers.contains { $0.0.lowercased() == "content-type" } ? headers : [("Content-Type", type)] + headers
        }
    }

    /// Why the server could not start.
    struct StartError: Error, CustomStringConvertible {
        let call: String
        let code: Int32

        var description: String { "TestServer: \(call) failed: \(String(cString: strerror(code)))" }
    }

    let port: Int
    let baseURL: URL
    private let core: Core

    /// Binds `127.0.0.1:0` and starts accepting connections immediately.
    init() throws {
        let listener = try TestServerSocket.listenOnLoopback()
        port = listener.port
        baseURL = URL(string: "http://127.0.0.1:\(listener.port)")!
        core = Core(listenFD: listener.fd)
        core.start()
    }

    deinit {
        core.stop()
    }

    /// Registers a route; `method` nil matches any method. `path` is matched exactly against the request path
    /// without its query. When several routes match, the most recently registered one wins.
    func route(_ method: String? = nil, _ path: String, _ handler: @escaping Handler) {
        core.state.withLock { $0.routes.append(Route(method: method, path: path, handler: handler)) }
    }

    /// Registers a route for any method (`route(nil, path, handler)`; Swift cannot skip the unlabeled `method`).
    func route(_ path: String, _ handler: @escaping Handler) {
        route(nil, path, handler)
    }

    /// Requests received for `path` (any method), counted once head and body are read, before the handler runs.
    func hits(_ path: String) -> Int {
        core.state.withLock { $0.hits[path, default: 0] }
    }

    /// Requests received for any path.
    var totalHits: Int { core.state.withLock { $0.requests.count } }

    /// Every request received, in arrival order.
    var requests: [Request] { core.state.withLock { $0.requests } }

    /// Connections currently open (each served by its own thread).
    var openConnections: Int { core.state.withLock { $0.connections.count } }

    /// Connections accepted since start (keep-alive reuse keeps this low).
    var acceptedConnections: Int { core.state.withLock { $0.accepted } }

    /// Bytes written to clients so far (heads and bodies, every connection), counted as the kernel accepts them.
    var bytesSent: Int { core.state.withLock { $0.bytesSent } }

    /// Suspends until `hits(path) >= count`. Also returns if the calling task is cancelled or the server stops.
    func waitForHits(_ path: String, count: Int) async {
        let id = core.state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                core.addWaiter(Waiter(id: id, path: path, count: count, continuation: continuation))
            }
        } onCancel: {
            core.removeWaiter(id)
        }
    }

    /// Closes the listening socket and every connection, then waits (up to 5 s) for the server's threads to exit.
    /// Safe to call more than once.
    func shutdown() {
        core.stop()
    }
}

extension TestServer {
    fileprivate struct Route {
        let method: String?
        let path: String
        let handler: Handler
    }

    fileprivate struct Waiter {
        let id: Int
        let path: String
        let count: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    fileprivate struct State {
        var routes: [Route] = []
        var hits: [String: Int] = [:]
        var requests: [Request] = []
        var waiters: [Waiter] = []
        var nextWaiterID = 0
        var connections: Set<Int32> = []
        var accepted = 0
        var bytesSent = 0
        var stopped = false
    }

    /// The sockets, threads and shared state. Threads retain the core, never the `TestServer`, so `deinit` runs.
    fileprivate final class Core: Sendable {
        let state = Locked(State())
        let listenFD: Int32
        private let threads = DispatchGroup()

        init(listenFD: Int32) {
            self.listenFD = listenFD
        }

        private var isStopped: Bool { state.withLock { $0.stopped } }

        func start() {
            threads.enter()
            Self.spawn("TestServer.accept") { self.acceptLoop() }
        }

        func stop() {
            let waiters = state.withLock { state -> [Waiter] in
                guard !state.stopped else { return [] }
                state.stopped = true
                // Under the lock, so no thread can have closed these descriptors yet.
                TestServerSocket.shutdownBoth(listenFD)
                state.connections.forEach(TestServerSocket.shutdownBoth)
                defer { state.waiters = [] }
                return state.waiters
            }
            waiters.forEach { $0.continuation.resume() }
            _ = threads.wait(timeout: .now() + .seconds(5))
        }

        func addWaiter(_ waiter: Waiter) {
            let ready = state.withLock { state in
                let done = state.stopped || Task.isCancelled || state.hits[waiter.path, default: 0] >= waiter.count
                if !done { state.waiters.append(waiter) }
                return done
            }
            if ready { waiter.continuation.resume() }
        }

        func removeWaiter(_ id: Int) {
            let removed = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            removed?.continuation.resume()
        }

        private static func spawn(_ name: String, _ body: @escaping @Sendable () -> Void) {
            let thread = Thread(block: body)
            thread.name = name
            thread.stackSize = 1 << 20
            thread.start()
        }

        /// Runs until `stop()`: polls so that it notices the flag even where shutdown does not wake `accept`.
        private func acceptLoop() {
            defer {
                TestServerSocket.closeFD(listenFD)
                threads.leave()
            }
            while !isStopped {
                guard TestServerSocket.waitReadable(listenFD, milliseconds: 100),
                    let fd = TestServerSocket.acceptClient(listenFD)
                else { continue }
                let admitted = state.withLock { state in
                    guard !state.stopped else { return false }
                    state.connections.insert(fd)
                    state.accepted += 1
                    return true
                }
                guard admitted else {
                    TestServerSocket.closeFD(fd)
                    return
                }
                threads.enter()
                Self.spawn("TestServer.connection") { self.serve(fd) }
            }
        }

        /// Serves requests on one connection until the client closes it, asks to, or the server stops.
        private func serve(_ fd: Int32) {
            defer {
                state.withLock { _ = $0.connections.remove(fd) }
                TestServerSocket.closeFD(fd)
                threads.leave()
            }
            var reader = RequestReader(fd: fd)
            while !isStopped {
                let request: Request
                let keepAlive: Bool
                switch reader.next() {
                case .closed:
                    return
                case .malformed:
                    let reply = Reply.text("bad request", status: 400, headers: [("Connection", "close")])
                    _ = TestServerSocket.sendAll(fd, HTTPWire.encode(reply, method: "GET", closing: true))
                    return
                case .request(let received, let persistent):
                    (request, keepAlive) = (received, persistent)
                }
                let handler = record(request)
                guard let reply = handler.map({ run($0, request, fd: fd) }) ?? .text("no route", status: 404) else {
                    return
                }
                switch reply.kind {
                case .close:
                    return
                case .stall:
                    TestServerSocket.drainUntilClosed(fd)
                    return
                case .raw(let bytes, let close):
                    guard write(fd, bytes), !close else { return }
                case .repeated(let head, let chunk, let count, let holdOpen):
                    guard write(fd, head) else { return }
                    for _ in 0..<count where !write(fd, chunk) { return }
                    if holdOpen { TestServerSocket.drainUntilClosed(fd) }
                    return
                case .reset(let bytes):
                    _ = write(fd, bytes)
                    TestServerSocket.resetOnClose(fd)
                    return
                case .streamed(let head, let next, let ending):
                    guard write(fd, head) else { return }
                    while let chunk = produce(next, fd: fd) {
                        var framed = Data((String(chunk.count, radix: 16) + "\r\n").utf8)
                        framed.append(chunk)
                        framed.append(contentsOf: "\r\n".utf8)
                        guard chunk.isEmpty || write(fd, framed) else { return }
                    }
                    if ending == .reset {
                        TestServerSocket.resetOnClose(fd)
                    } else {
                        _ = write(fd, Data("0\r\n\r\n".utf8))
                    }
                    return
                case .response:
                    let bytes = HTTPWire.encode(reply, method: request.method, closing: !keepAlive)
                    guard write(fd, bytes) else { return }
                }
                if !keepAlive { return }
            }
        }

        /// Writes all of `bytes`, counting what the kernel accepts; false if the peer went away.
        private func write(_ fd: Int32, _ bytes: Data) -> Bool {
            TestServerSocket.sendAll(fd, bytes) { sent in state.withLock { $0.bytesSent += sent } }
        }

        /// Counts the request, wakes satisfied waiters, and returns the matching handler.
        private func record(_ request: Request) -> Handler? {
            let (handler, ready) = state.withLock { state in
                state.requests.append(request)
                state.hits[request.path, default: 0] += 1
                let hits = state.hits[request.path, default: 0]
                var ready: [Waiter] = []
                state.waiters.removeAll { waiter in
                    guard waiter.path == request.path, hits >= waiter.count else { return false }
                    ready.append(waiter)
                    return true
                }
                let route = state.routes.last {
                    ($0.method ?? request.method) == request.method && $0.path == request.path
                }
                return (route?.handler, ready)
            }
            ready.forEach { $0.continuation.resume() }
            return handler
        }

        /// The next chunk of a streamed reply, produced in a task while this thread waits; nil at the end, or when the
        /// client went away or the server stopped.
        private func produce(_ next: @escaping @Sendable () async -> Data?, fd: Int32) -> Data? {
            let result = Locked<Data?>(nil)
            let done = DispatchSemaphore(value: 0)
            let task = Task {
                let chunk = await next()
                result.withLock { $0 = chunk }
                done.signal()
            }
            while done.wait(timeout: .now() + .milliseconds(20)) == .timedOut {
                if isStopped || TestServerSocket.peerClosed(fd) {
                    task.cancel()
                    return nil
                }
            }
            return result.withLock { $0 }
        }

        /// Runs `handler` in a task and blocks this (non-pool) thread until it finishes. Returns nil, cancelling the
        /// task, if the client disconnects or the server stops first.
        private func run(_ handler: @escaping Handler, _ request: Request, fd: Int32) -> Reply? {
            let result = Locked<Reply?>(nil)
            let done = DispatchSemaphore(value: 0)
            let task = Task {
                let reply = await handler(request)
                result.withLock { $0 = reply }
                done.signal()
            }
            while done.wait(timeout: .now() + .milliseconds(20)) == .timedOut {
                if isStopped || TestServerSocket.peerClosed(fd) {
                    task.cancel()
                    return nil
                }
            }
            return result.withLock { $0 }
        }
    }
}
