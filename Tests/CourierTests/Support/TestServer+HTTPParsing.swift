import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension TestServer {
    /// Reads HTTP/1.1 requests from a blocking socket, keeping unread bytes for the next request on the connection.
    struct RequestReader {
        enum Result {
            case request(Request, keepAlive: Bool)
            case closed
            case malformed
        }

        private static let maxLine = 64 * 1024
        private static let maxHeaders = 256
        private static let maxBody = 256 * 1024 * 1024

        let fd: Int32
        private var buffer: [UInt8] = []
        private var start = 0

        init(fd: Int32) {
            self.fd = fd
        }

        /// Reads the next request; `.closed` when the peer closes (or the server shuts the socket down).
        mutating func next() -> Result {
            var requestLine = ""
            for _ in 0..<8 where requestLine.isEmpty {  // RFC 9112 §2.2: ignore a few leading empty lines.
                guard let line = readLine() else { return .closed }
                requestLine = line
            }
            let parts = requestLine.split(separator: " ")
            guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else { return .malformed }
            let method = String(parts[0])
            let version = String(parts[2])

            var headers: [(name: String, value: String)] = []
            while true {
                guard let line = readLine() else { return .closed }
                if line.isEmpty { break }
                guard headers.count < Self.maxHeaders, let colon = line.firstIndex(of: ":") else { return .malformed }
                let name = line[..<colon].trimmingCharacters(in: .whitespaces)
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                headers.append((name: name, value: value))
            }
            let head = Request(
                method: method, target: "", path: "", query: nil, headers: headers, body: Data())
            if head.header("Expect")?.lowercased() == "100-continue", version == "HTTP/1.1" {
                guard TestServerSocket.sendAll(fd, Data("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { return .closed }
            }

            let body: [UInt8]
            if head.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
                switch readChunkedBody() {
                case .success(let bytes): body = bytes
                case .failure(let failure): return failure == .closed ? .closed : .malformed
                }
            } else if let length = head.header("Content-Length") {
                guard let count = Int(length), (0...Self.maxBody).contains(count) else { return .malformed }
                guard let bytes = readBytes(count) else { return .closed }
                body = bytes
            } else {
                body = []
            }

            let target = String(parts[1])
            let (path, query) = Self.split(target)
            let connection = head.header("Connection")?.lowercased() ?? ""
            let keepAlive =
                version == "HTTP/1.1" ? !connection.contains("close") : connection.contains("keep-alive")
            let request = Request(
                method: method, target: target, path: path, query: query, headers: headers, body: Data(body))
            return .request(request, keepAlive: keepAlive)
        }

        private enum BodyFailure: Error {
            case closed
            case malformed
        }

        private mutating func readChunkedBody() -> Swift.Result<[UInt8], BodyFailure> {
            var body: [UInt8] = []
            while true {
                guard let sizeLine = readLine() else { return .failure(.closed) }
                let hex = sizeLine.split(separator: ";").first?.trimmingCharacters(in: .whitespaces) ?? ""
                guard let size = Int(hex, radix: 16), size >= 0, body.count + size <= Self.maxBody else {
                    return .failure(.malformed)
                }
                if size == 0 { break }
                guard let chunk = readBytes(size), let end = readLine() else { return .failure(.closed) }
                guard end.isEmpty else { return .failure(.malformed) }
                body += chunk
            }
            for _ in 0..<Self.maxHeaders {  // Trailer fields, ignored.
                guard let line = readLine() else { return .failure(.closed) }
                if line.isEmpty { return .success(body) }
            }
            return .failure(.malformed)
        }

        /// Splits a request target into path and query; an absolute-form target loses its scheme and authority.
        private static func split(_ target: String) -> (path: String, query: String?) {
            var rest = Substring(target)
            if let scheme = rest.range(of: "://"), !rest[..<scheme.lowerBound].contains("/") {
                rest = rest[scheme.upperBound...]
                rest = rest.firstIndex(where: { $0 == "/" || $0 == "?" }).map { rest[$0...] } ?? "/"
            }
            guard let mark = rest.firstIndex(of: "?") else { return (String(rest), nil) }
            return (String(rest[..<mark]), String(rest[rest.index(after: mark)...]))
        }

        /// One line without its LF (and CR, if any); nil on EOF or an over-long line.
        private mutating func readLine() -> String? {
            var scanned = 0
            while true {
                if let newline = buffer[(start + scanned)...].firstIndex(of: 10) {
                    var end = newline
                    if end > start, buffer[end - 1] == 13 { end -= 1 }
                    let line = String(decoding: buffer[start..<end], as: UTF8.self)
                    start = newline + 1
                    return line
                }
                scanned = buffer.count - start
                guard scanned <= Self.maxLine, fill() else { return nil }
            }
        }

        private mutating func readBytes(_ count: Int) -> [UInt8]? {
            while buffer.count - start < count {
                guard fill() else { return nil }
            }
            defer { start += count }
            return Array(buffer[start..<(start + count)])
        }

        /// Appends whatever the socket has (blocking); false on EOF or error.
        private mutating func fill() -> Bool {
            if start > 0 {
                buffer.removeFirst(start)
                start = 0
            }
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            let count = TestServerSocket.receive(fd, into: &chunk)
            guard count > 0 else { return false }
            buffer += chunk[..<count]
            return true
        }
    }

    /// Serializes replies.
    enum HTTPWire {
        /// Status line, headers (plus `Content-Length` unless already framed) and body. HEAD gets the length but no
        /// body; 1xx, 204 and 304 get neither.
        static func encode(_ reply: Reply, method: String, closing: Bool) -> Data {
            guard case .response(let status, var headers, let body) = reply.kind else { return Data() }
            let bodyless = (100..<200).contains(status) || status == 204 || status == 304
            let names = Set(headers.map { $0.0.lowercased() })
            if !bodyless, !names.contains("content-length"), !names.contains("transfer-encoding") {
                headers.append(("Content-Length", String(body.count)))
            }
            if closing, !names.contains("connection") {
                headers.append(("Connection", "close"))
            }
            var head = "HTTP/1.1 \(status) \(reason(status))\r\n"
            for (name, value) in headers {
                head += "\(name): \(value)\r\n"
            }
            head += "\r\n"
            var bytes = Data(head.utf8)
            if !bodyless, method != "HEAD" {
                bytes.append(body)
            }
            return bytes
        }

        static func reason(_ status: Int) -> String {
            let reasons = [
                100: "Continue", 200: "OK", 201: "Created", 202: "Accepted", 204: "No Content",
                206: "Partial Content", 301: "Moved Permanently", 302: "Found", 303: "See Other",
                304: "Not Modified", 307: "Temporary Redirect", 308: "Permanent Redirect", 400: "Bad Request",
                401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
                408: "Request Timeout", 409: "Conflict", 410: "Gone", 413: "Content Too Large",
                415: "Unsupported Media Type", 422: "Unprocessable Content", 429: "Too Many Requests",
                500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway",
                503: "Service Unavailable", 504: "Gateway Timeout",
            ]
            return reasons[status] ?? "Status \(status)"
        }
    }
}

/// Thin wrappers over the POSIX socket calls `TestServer` needs (names chosen not to clash with its members).
enum TestServerSocket {
    #if canImport(Darwin)
        private static let streamType = SOCK_STREAM
        private static let sendFlags: Int32 = 0
    #else
        private static let streamType = Int32(SOCK_STREAM.rawValue)
        private static let sendFlags = Int32(MSG_NOSIGNAL)
    #endif

    /// A listening socket on `127.0.0.1` with a kernel-chosen port. With `listening: false` the port is only held
    /// (exclusively, no `SO_REUSEADDR`): connecting to it is refused, and no other server can take it meanwhile.
    static func listenOnLoopback(listening: Bool = true) throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { throw TestServer.StartError(call: "socket", code: errno) }
        var failure: TestServer.StartError?
        var yes: Int32 = 1
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        #if canImport(Darwin)
            address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                if listening, setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size)) != 0 {
                    failure = TestServer.StartError(call: "setsockopt", code: errno)
                } else if bind(fd, socketAddress, length) != 0 {
                    failure = TestServer.StartError(call: "bind", code: errno)
                } else if listening, listen(fd, SOMAXCONN) != 0 {
                    failure = TestServer.StartError(call: "listen", code: errno)
                } else if getsockname(fd, socketAddress, &length) != 0 {
                    failure = TestServer.StartError(call: "getsockname", code: errno)
                }
            }
        }
        if let failure {
            closeFD(fd)
            throw failure
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Accepts one pending connection; nil on failure (briefly backing off, e.g. when out of descriptors).
    static func acceptClient(_ listenFD: Int32) -> Int32? {
        let fd = accept(listenFD, nil, nil)
        guard fd >= 0 else {
            usleep(5_000)
            return nil
        }
        var yes: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
            _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
        return fd
    }

    static func waitReadable(_ fd: Int32, milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, milliseconds) > 0
    }

    /// Blocking read into `buffer`; 0 on EOF, negative on error.
    static func receive(_ fd: Int32, into buffer: inout [UInt8]) -> Int {
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count >= 0 || errno != EINTR { return count }
        }
    }

    /// Writes all of `data`, reporting each part the kernel accepts to `onSent`; false if the peer went away.
    static func sendAll(_ fd: Int32, _ data: Data, onSent: (Int) -> Void = { _ in }) -> Bool {
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let sent = send(fd, raw.baseAddress! + offset, raw.count - offset, sendFlags)
                if sent < 0, errno == EINTR { continue }
                guard sent > 0 else { return false }
                onSent(sent)
                offset += sent
            }
            return true
        }
    }

    /// Whether the peer has closed (or reset) the connection, without consuming pending bytes.
    static func peerClosed(_ fd: Int32) -> Bool {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
        if count > 0 { return false }
        return count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    }

    /// Discards input until the peer closes or the socket is shut down.
    static func drainUntilClosed(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while receive(fd, into: &buffer) > 0 {}
    }

    /// Wakes any thread blocked on `fd`; the owning thread closes it.
    static func shutdownBoth(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Makes the coming `close` abort the connection with a TCP RST (`SO_LINGER` with a zero timeout).
    static func resetOnClose(_ fd: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }

    static func closeFD(_ fd: Int32) {
        _ = close(fd)
    }
}
