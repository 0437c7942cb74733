#if AsyncHTTPClient
    import AsyncHTTPClient
    import Courier
    import Foundation
    import NIOCore
    import NIOHTTP1

    /// One request of a chain of redirects: what the transport sends next, and the rules that make the next hop.
    ///
    /// The transport follows redirects itself (``AsyncHTTPClientTransport/defaultConfiguration`` turns
    /// AsyncHTTPClient's off) so that the request's own ``CredentialPolicy`` decides what a redirect to another origin
    /// drops, as ``URLSessionTransport`` does.
    struct RedirectHop {
        /// What this hop sends: the caller's request, or the one a redirect made of it. One reference: a hop lives
        /// across the wait of every hop of an attempt, and as its seven fields it took four 136-byte slots of that
        /// frame, each copy retaining every field (`Docs/Benchmarks.md`, session 21).
        private(set) var request: TransportRequest
        /// The caller's URL: credentials never follow a redirect away from its origin.
        let origin: URL

        init(_ request: TransportRequest) {
            self.request = request
            origin = request.url
        }

        var method: RequestMethod { request.method }
        var streamedBody: StreamedBody? { request.streamedBody }

        /// The request as AsyncHTTPClient takes it. Framing (`Content-Length`, `Transfer-Encoding`) is left to
        /// AsyncHTTPClient, which derives it from the body.
        ///
        /// - Throws: What ``StreamedBody/makeChunks()`` throws: a one-shot body already sent (a 307 asking for it
        ///   again) is ``InvalidRequestReason/bodyNotReplayable``.
        func clientRequest() throws -> HTTPClientRequest {
            var outgoing = HTTPClientRequest(url: request.url.absoluteString)
            outgoing.method = HTTPMethod(rawValue: method.rawValue)
            outgoing.headers = fields
            if let streamedBody {
                let length: HTTPClientRequest.Body.Length = streamedBody.length.map { .known(Int64($0)) } ?? .unknown
                outgoing.body = .stream(RequestBodyChunks(try streamedBody.makeChunks()), length: length)
            } else if let body = request.body {
                outgoing.body = .bytes(body)
            }
            return outgoing
        }

        /// The same request on AsyncHTTPClient's task API, whose exchanges can be stopped from outside (see
        /// ``AsyncHTTPClientTransport/send(_:deadline:)``). Only for a body held whole.
        func taskRequest() throws -> HTTPClient.Request {
            // The `URL` itself, not its text: the initializer taking a string parses it into a `URL` again, which was
            // about 2 % of the client's CPU at 100 concurrent requests against nginx.
            try HTTPClient.Request(
                url: request.url.absoluteURL, method: HTTPMethod(rawValue: method.rawValue), headers: fields,
                body: request.body.map { .data($0) })
        }

        /// The request's header fields as AsyncHTTPClient takes them, framing left out.
        private var fields: HTTPHeaders {
            let headers = request.headers
            var fields = HTTPHeaders()
            fields.reserveCapacity(headers.count)
            for field in headers where !Self.isFraming(field.name) {
                fields.add(name: field.name, value: field.value)
            }
            return fields
        }

        /// The next hop when a response with `status` and `headers` is a redirect the transport follows, `nil` when it
        /// is the final response: not a redirect, no `Location`, or a target that is not an http(s) URL (the caller gets
        /// the 3xx itself).
        ///
        /// A 303 (but for a `HEAD`), and a 301 or 302 of a `POST`, are followed with a `GET` and no body, as browsers
        /// and URLSession do (RFC 9110 §15.4.2–4 allows it); 307 and 308 keep the method and the body (§15.4.8–9).
        func following(status: Int, headers responseHeaders: HTTPHeaders) -> RedirectHop? {
            let url = request.url
            guard [301, 302, 303, 307, 308].contains(status), let location = responseHeaders.first(name: "location"),
                let target = URL(string: location, relativeTo: url)?.absoluteURL,
                let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https", target.host != nil
            else { return nil }
            var next = self
            next.request.url = target
            let method = request.method
            if (status == 303 && method != .head) || ((status == 301 || status == 302) && method == .post) {
                next.request.method = .get
                next.request.body = nil
                next.request.streamedBody = nil
                next.request.headers = HeaderFields(
                    request.headers.filter { !Self.bodyHeaderNames.contains($0.name.lowercased()) }.map {
                        ($0.name, $0.value)
                    })
            }
            if !Self.sameOrigin(origin, target) {
                let credentials = request.credentials
                next.request.headers = HeaderFields(
                    next.request.headers.filter { !credentials.isCredential(headerNamed: $0.name) }.map {
                        ($0.name, $0.value)
                    })
            }
            return next
        }

        // MARK: Rules

        /// Fields that describe a body, dropped with it when a redirect turns the request into a `GET` (the Fetch
        /// standard's request-body-header names).
        static let bodyHeaderNames: Set<String> = [
            "content-type", "content-length", "content-encoding", "content-language", "content-location",
        ]

        static func isFraming(_ name: String) -> Bool {
            name.utf8.count == 14 && name.lowercased() == "content-length"
                || name.utf8.count == 17 && name.lowercased() == "transfer-encoding"
        }

        /// Whether two URLs have the same origin (RFC 6454): scheme, host and port, default ports filled in.
        static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
            func origin(_ url: URL) -> (String, String, Int)? {
                guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else {
                    return nil
                }
                return (scheme, host, url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1))
            }
            guard let left = origin(lhs), let right = origin(rhs) else { return false }
            return left == right
        }
    }

    /// What the transport needs of a response's head, read once.
    struct ResponseHead {
        let statusCode: Int
        let headers: HeaderFields
        /// The header fields as AsyncHTTPClient gave them, for the redirect rules.
        let fields: HTTPHeaders
        /// The `Content-Length` of a response that has a body (not to a `HEAD`, not a 1xx, 204 or 304).
        let announcedLength: Int?

        init(_ response: HTTPClientResponse, method: RequestMethod) {
            self.init(status: response.status, fields: response.headers, method: method)
        }

        init(_ head: HTTPResponseHead, method: RequestMethod) {
            self.init(status: head.status, fields: head.headers, method: method)
        }

        private init(status: HTTPResponseStatus, fields: HTTPHeaders, method: RequestMethod) {
            statusCode = Int(status.code)
            self.fields = fields
            var headers = HeaderFields()
            headers.reserveCapacity(fields.count)
            for (name, value) in fields { headers.add(name: name, value: value) }
            self.headers = headers
            let hasBody = method != .head && statusCode >= 200 && statusCode != 204 && statusCode != 304
            announcedLength = hasBody ? fields.first(name: "content-length").flatMap { Int($0) } : nil
        }
    }
#endif
