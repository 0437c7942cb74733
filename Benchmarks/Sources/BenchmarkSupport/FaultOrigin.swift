import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A minimal HTTP/1.1 origin on `127.0.0.1` whose answers a fault plan decides, for the resilience report: real
/// loopback sockets, one thread per connection (keep-alive), blocking POSIX calls.
///
/// Per request the plan says which status to answer and how long to take; ``maxConcurrent`` bounds how many
/// requests are served at once (the rest wait in line, as an overloaded server queues them), and
/// ``stopListening()`` / ``startListening()`` make the port refuse connections and accept them again.
public final class FaultOrigin: Sendable {
    /// What the origin does with one request.
    public struct Answer: Sendable {
        /// The status code.
        public var status: Int
        /// How long the origin takes before it answers.
        public var delay: Duration

        /// Creates an answer.
        public init(status: Int, delay: Duration) {
            self.status = status
            self.delay = delay
        }
    }

    /// Decides the answer to request number `index` (from 0, over the origin's life).
    public typealias Plan = @Sendable (_ index: Int) -> Answer

    /// The port the origin listens on.
    public let port: UInt16
    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    private let plan: Plan
    private let slots: DispatchSemaphore?
    private let requests = Atomic<Int>(0)
    private let state = Mutex(State())

    private struct State {
        var listener: Int32 = -1
        var connections: Set<Int32> = []
        var stopped = false
    }

    /// Starts listening on an ephemeral port.
    ///
    /// - Parameters:
    ///   - maxConcurrent: The most requests served at once; `nil` for no bound.
    ///   - plan: The answer to each request.
    public init(maxConcurrent: Int? = nil, plan: @escaping Plan) throws {
        self.plan = plan
        self.slots = maxConcurrent.map { DispatchSemaphore(value: $0) }
        let (listener, port) = try Self.listen(port: 0)
        self.port = port
        state.withLock { $0.listener = listener }
        startAccepting(listener)
    }

    deinit { shutdown() }

    /// Requests received so far.
    public var requestCount: Int { requests.load(ordering: .relaxed) }

    /// Closes the port and every open connection: new connections are refused until ``startListening()``.
    public func stopListening() {
        let (listener, connections) = state.withLock { state -> (Int32, Set<Int32>) in
            defer {
                state.listener = -1
                state.connections = []
            }
            return (state.listener, state.connections)
        }
        if listener >= 0 {
            shutDown(listener)
            close(listener)
        }
        for connection in connections { shutDown(connection) }
    }

    /// Listens on the same port again.
    public func startListening() throws {
        let (listener, _) = try Self.listen(port: port)
        state.withLock { $0.listener = listener }
        startAccepting(listener)
    }

    /// Stops listening and closes every connection, for good.
    public func shutdown() {
        state.withLock { $0.stopped = true }
        stopListening()
    }

    // MARK: Sockets

    private static func listen(port: UInt16) throws -> (Int32, UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listenOn(fd) else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    private func startAccepting(_ listener: Int32) {
        let thread = Thread { [self] in
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return }
                var yes: Int32 = 1
                setsockopt(connection, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
                let accepted = state.withLock { state in
                    guard !state.stopped, state.listener == listener else { return false }
                    state.connections.insert(connection)
                    return true
                }
                guard accepted else {
                    close(connection)
                    continue
                }
                let worker = Thread { [self] in serve(connection) }
                worker.stackSize = 256 << 10
                worker.start()
            }
        }
        thread.start()
    }

    /// Serves requests on one connection until the client or the origin closes it.
    private func serve(_ connection: Int32) {
        defer {
            state.withLock { _ = $0.connections.remove(connection) }
            close(connection)
        }
        var buffer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            // Read one request head (the report sends GETs without a body).
            var end: Int?
            while end == nil {
                let count = read(connection, &chunk, chunk.count)
                guard count > 0 else { return }
                buffer.append(contentsOf: chunk[0..<count])
                end = Self.headEnd(buffer)
            }
            buffer.removeFirst(end!)
            let index = requests.add(1, ordering: .relaxed).oldValue
            let answer = plan(index)
            slots?.wait()
            if answer.delay > .zero { Thread.sleep(forTimeInterval: answer.delay.seconds) }
            slots?.signal()
            let body = answer.status < 400 ? "ok" : "failed"
            let head =
                "HTTP/1.1 \(answer.status) \(answer.status < 400 ? "OK" : "Error")\r\nContent-Type: text/plain\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
            let bytes = Array(head.utf8)
            var written = 0
            while written < bytes.count {
                // MSG_NOSIGNAL: a client that hung up (a cancelled hedge) must not kill the process with SIGPIPE.
                let count = bytes[written...].withUnsafeBytes {
                    send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                guard count > 0 else { return }
                written += count
            }
        }
    }

    private static func headEnd(_ buffer: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 3..<buffer.count
        where buffer[index] == 10 && buffer[index - 1] == 13 && buffer[index - 2] == 10 && buffer[index - 3] == 13 {
            return index + 1
        }
        return nil
    }
}

/// Starts listening with a backlog deep enough for a burst of connections.
private func listenOn(_ socket: Int32) -> Bool {
    listen(socket, 1024) == 0
}

/// Ends both directions of a socket: wakes a thread blocked in `accept` or `read` on it.
private func shutDown(_ socket: Int32) {
    _ = shutdown(socket, Int32(SHUT_RDWR))
}

extension Duration {
    /// The duration in seconds as a `Double`.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
