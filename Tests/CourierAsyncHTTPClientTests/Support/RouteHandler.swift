#if AsyncHTTPClient
    import Foundation
    import NIOCore
    import NIOHTTP1

    /// The test server's routes, one behaviour each:
    ///
    /// | path | answer |
    /// |---|---|
    /// | `/json` | `{"id":7,"name":"courier"}` |
    /// | `/headers` | 200, the request's header fields as a JSON object (lower-cased names) |
    /// | `/redirect?status=S&to=URL` | status `S` (302 by default) with `Location: URL`; `?loop=1` redirects to itself |
    /// | `/upload` | checks a body of the ``uploadPattern``: `{"bytes":N,"intact":true,"length":"…","chunked":false}` |
    /// | `/chunked` | `alpha-beta-gamma` in three chunks, no `Content-Length` |
    /// | `/encoded` | ``encodedBody`` with `Content-Encoding: unknown-coding` |
    /// | `/gated` | 401 with `WWW-Authenticate: Bearer` unless `Authorization: Bearer fresh`, then `{"id":7,…}` |
    /// | `/reset` | announces 100,000 bytes, sends 1,000, then resets the connection |
    /// | `/stall` | announces 10 MB, sends 64 KiB, then waits forever |
    /// | `/flood?bytes=N` | N bytes as fast as the connection takes them, logging each time it cannot write |
    final class RouteHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        static let json = #"{"id":7,"name":"courier"}"#
        static let encodedBody: [UInt8] = [0x1F, 0x8B, 0x00, 0xFF, 0x42, 0x13, 0x37, 0x00, 0x80]

        /// The byte at `offset` of an upload body the server accepts as intact.
        static func uploadPattern(_ offset: Int) -> UInt8 { UInt8(truncatingIfNeeded: offset % 251) }

        private let log: ServerLog
        private var head: HTTPRequestHead?
        private var bodyBytes = 0
        private var bodyIntact = true
        /// The route that answers slowly or not at all, so that a close before its end is logged.
        private var openPath: String?
        private var flood: (total: Int, written: Int, chunk: ByteBuffer)?

        init(log: ServerLog) { self.log = log }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                bodyBytes = 0
                bodyIntact = true
            case .body(let buffer):
                for (index, byte) in buffer.readableBytesView.enumerated()
                where byte != Self.uploadPattern(bodyBytes + index) {
                    bodyIntact = false
                    break
                }
                bodyBytes += buffer.readableBytes
            case .end:
                guard let head else { return }
                var headers: [String: String] = [:]
                for (name, value) in head.headers { headers[name.lowercased()] = value }
                let components = URLComponents(string: head.uri)
                let path = components?.path ?? head.uri
                log.record(.request(method: "\(head.method)", path: path, headers: headers, bodyBytes: bodyBytes))
                let query = Dictionary(
                    (components?.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
                respond(to: path, query: query, headers: headers, context: context)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            if let openPath { log.record(.closedEarly(path: openPath)) }
            openPath = nil
            context.fireChannelInactive()
        }

        func channelWritabilityChanged(context: ChannelHandlerContext) {
            if context.channel.isWritable { pump(context: context) }
            context.fireChannelWritabilityChanged()
        }

        // MARK: Routes

        private func respond(
            to path: String, query: [String: String], headers: [String: String], context: ChannelHandlerContext
        ) {
            switch path {
            case "/json":
                send(200, ["Content-Type": "application/json"], Array(Self.json.utf8), context: context)
            case "/headers":
                let body = try! JSONSerialization.data(withJSONObject: headers, options: [.sortedKeys])
                send(200, ["Content-Type": "application/json"], Array(body), context: context)
            case "/redirect":
                let status = Int(query["status"] ?? "") ?? 302
                let location = query["loop"] != nil ? "/redirect?loop=1" : query["to"] ?? "/json"
                send(status, ["Location": location], Array("moved".utf8), context: context)
            case "/upload":
                let body =
                    #"{"bytes":\#(bodyBytes),"intact":\#(bodyIntact),"length":"\#(headers["content-length"] ?? "")","#
                    + #""chunked":\#(headers["transfer-encoding"]?.lowercased() == "chunked")}"#
                send(200, ["Content-Type": "application/json"], Array(body.utf8), context: context)
            case "/chunked":
                writeHead(200, ["Content-Type": "text/plain"], context: context)
                for part in ["alpha-", "beta-", "gamma"] {
                    context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: part)))), promise: nil)
                }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            case "/encoded":
                send(
                    200, ["Content-Encoding": "unknown-coding", "Content-Type": "application/octet-stream"],
                    Self.encodedBody, context: context)
            case "/gated":
                if headers["authorization"] == "Bearer fresh" {
                    send(200, ["Content-Type": "application/json"], Array(Self.json.utf8), context: context)
                } else {
                    send(401, ["WWW-Authenticate": #"Bearer error="invalid_token""#], [], context: context)
                }
            case "/reset":
                writeHead(200, ["Content-Length": "100000"], context: context)
                let part = context.writeAndFlush(
                    wrapOutboundOut(.body(.byteBuffer(ByteBuffer(repeating: 0x61, count: 1000)))))
                let channel = context.channel
                part.whenComplete { _ in
                    // A zero linger time makes the close a reset (RST) rather than an orderly end (FIN).
                    guard let socket = channel as? any SocketOptionProvider else { return channel.close(promise: nil) }
                    socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil)
                    }
                }
            case "/stall":
                openPath = path
                writeHead(200, ["Content-Length": "10000000"], context: context)
                context.writeAndFlush(
                    wrapOutboundOut(.body(.byteBuffer(ByteBuffer(repeating: 0x62, count: 65536)))), promise: nil)
                log.record(.responding(path: path))
            case "/flood":
                openPath = path
                let total = Int(query["bytes"] ?? "") ?? 0
                writeHead(200, ["Content-Length": "\(total)"], context: context)
                flood = (total, 0, ByteBuffer(repeating: 0x63, count: 65536))
                pump(context: context)
            default:
                send(404, [:], Array("no such route".utf8), context: context)
            }
        }

        /// Writes the flood's chunks while the connection takes them; logs where it had to stop.
        private func pump(context: ChannelHandlerContext) {
            guard var flood else { return }
            while context.channel.isWritable, flood.written < flood.total {
                let size = min(flood.chunk.readableBytes, flood.total - flood.written)
                context.writeAndFlush(
                    wrapOutboundOut(.body(.byteBuffer(flood.chunk.getSlice(at: 0, length: size)!))), promise: nil)
                flood.written += size
            }
            self.flood = flood
            if flood.written == flood.total {
                self.flood = nil
                openPath = nil
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                log.record(.finished(written: flood.written))
            } else {
                log.record(.blocked(written: flood.written))
            }
        }

        private func writeHead(_ status: Int, _ fields: [String: String], context: ChannelHandlerContext) {
            var headers = HTTPHeaders()
            for (name, value) in fields { headers.add(name: name, value: value) }
            let head = HTTPResponseHead(
                version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers)
            context.write(wrapOutboundOut(.head(head)), promise: nil)
        }

        private func send(_ status: Int, _ fields: [String: String], _ body: [UInt8], context: ChannelHandlerContext) {
            var fields = fields
            fields["Content-Length"] = "\(body.count)"
            writeHead(status, fields, context: context)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
#endif
