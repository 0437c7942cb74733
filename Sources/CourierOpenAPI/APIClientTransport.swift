#if OpenAPI
    import Courier
    import CourierHTTPTypes
    import Foundation
    import HTTPTypes
    import OpenAPIRuntime

    /// A `ClientTransport` that sends every operation of an OpenAPI-generated client through an ``Courier/APIClient``,
    /// so the generated client gets coalescing, the response cache, token refresh, retries, deadlines and events
    /// with no other change.
    ///
    /// ```swift
    /// let api = APIClient(baseURL: serverURL, configuration: configuration)  // authenticator, cache, retries…
    /// let notes = Client(serverURL: serverURL, transport: APIClientTransport(client: api))
    ///
    /// switch try await notes.getNote(path: .init(noteID: 42)) {
    /// case .ok(let ok): print(try ok.body.json.text)
    /// case .notFound: print("no such note")
    /// case .undocumented(let status, _): print("unexpected status \(status)")
    /// }
    /// ```
    ///
    /// Every status reaches the generated client as a response, so a documented `404` arrives as its `.notFound`
    /// case rather than as an error: the transport sets ``Courier/APIRequest/throwsOnUnacceptableStatus`` to `false`.
    /// Retries and the refresh after a `401` still happen first, and a `401` that remains is returned as a response
    /// too. Only failures without a response (the network, a deadline, a refresh that failed) are thrown, as the
    /// ``Courier/APIError`` the client threw; the generated client wraps it in its `ClientError`.
    ///
    /// - Important: The client's credentials go only to its base URL's origin and its
    ///   ``Courier/APIClient/Configuration/trustedOrigins``. Give the ``Courier/APIClient`` the generated client's
    ///   server URL (or trust its origin), or authenticated operations are sent without a token.
    public struct APIClientTransport: ClientTransport {
        /// The client every operation is sent through.
        public let client: APIClient
        /// Adjusts each request before it is sent; see ``init(client:configure:)``.
        private let configure: @Sendable (_ request: inout APIRequest<Data>, _ operationID: String) -> Void

        /// Creates a transport.
        ///
        /// - Parameters:
        ///   - client: The client every operation is sent through.
        ///   - configure: Adjusts the request of one operation, named by its `operationId`, before it is sent: for
        ///     example `requiresAuthentication = false` for a login operation, a `cachePolicy`, a `timeout`, or
        ///     `coalescing = .never`. Does nothing by default.
        public init(
            client: APIClient,
            configure: @escaping @Sendable (_ request: inout APIRequest<Data>, _ operationID: String) -> Void = {
                _, _ in
            }
        ) {
            self.client = client
            self.configure = configure
        }

        /// Sends one operation through the client and returns the final response, whatever its status.
        ///
        /// - Parameters:
        ///   - request: The request the generated client built; its path is relative to `baseURL`.
        ///   - body: The request body, or `nil` for none.
        ///   - baseURL: The server URL the generated client was created with.
        ///   - operationID: The operation's `operationId`, passed to `configure`.
        /// - Returns: The response head and its body (`nil` for `HEAD`).
        /// - Throws: ``Courier/APIError`` for every failure without a response, or `CancellationError`.
        public func send(
            _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
        ) async throws -> (HTTPResponse, HTTPBody?) {
            var call = APIRequest<Data>(
                method: RequestMethod(rawValue: request.method.rawValue),
                path: try OperationTarget.absoluteURL(base: baseURL, path: request.path),
                headers: HeaderFields(request.headerFields),
                body: try await BodyBuffer.payload(of: body))
            call.throwsOnUnacceptableStatus = false
            configure(&call, operationID)
            let response: TransportResponse
            do {
                let answer = try await client.send(call)
                response = TransportResponse(statusCode: answer.statusCode, headers: answer.headers, body: answer.data)
            } catch APIError.unauthorized(let refused) {
                // The refresh and resend already happened; an OpenAPI document describes a 401 as a response.
                response = refused
            }
            return (try HTTPResponse(response), BodyBuffer.body(of: response, for: request.method))
        }
    }

    /// Where an operation goes: the generated client's server URL with the operation's path appended.
    enum OperationTarget {
        /// `base` without its query, fragment and trailing slashes, followed by `path` (which carries the query).
        ///
        /// - Throws: ``Courier/APIError/invalidRequest(_:)`` when `path` is missing or not absolute.
        static func absoluteURL(base: URL, path: String?) throws(APIError) -> String {
            guard let path, path.hasPrefix("/") else {
                throw .invalidRequest(
                    .invalidPath(path ?? "", problem: "is not an absolute path (it must start with /)"))
            }
            var prefix = Substring(base.absoluteString)
            if let end = prefix.firstIndex(where: { $0 == "?" || $0 == "#" }) { prefix = prefix[..<end] }
            while prefix.hasSuffix("/") { prefix = prefix.dropLast() }
            return prefix + path
        }
    }
#endif
